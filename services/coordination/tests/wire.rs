//! Coordination as seen on the wire: garbage and missing fields answered with
//! `invalid_request` naming the subject, and a NATS micro service listing exactly its subjects.

mod common;
use relay_contracts::{Rpc, access, rpc};
use serde_json::json;
use std::collections::BTreeSet;

fn subjects() -> Vec<&'static str> {
    rpc::ALL
        .iter()
        .filter(|r| r.service == rpc::service::COORDINATION)
        .map(|r| r.subject)
        .collect()
}

/// Subjects whose request has no required field.
const NO_REQUIRED_FIELDS: &[&str] = &[rpc::ActionList::SUBJECT, rpc::ConsensusList::SUBJECT];

#[tokio::test]
async fn every_coordination_subject_answers_garbage_and_missing_fields_with_invalid_request() {
    let m = common::start(1).await;
    assert_eq!(subjects().len(), 8, "{:?}", subjects());
    for subject in subjects() {
        for body in [&b"{not json"[..], b"\xff\xfe\x00binary", b"[1,2,3]"] {
            let reply = m
                .client
                .request(subject.to_string(), body.to_vec().into())
                .await
                .unwrap();
            let err: serde_json::Value = serde_json::from_slice(&reply.payload).unwrap();
            assert_eq!(err["error"]["code"], "invalid_request", "{subject}: {err}");
            assert!(reply.headers.is_some(), "{subject}: micro error headers");
        }
        if NO_REQUIRED_FIELDS.contains(&subject) {
            m.ok(subject, json!({})).await;
        } else {
            let e = m.err(subject, json!({}), "invalid_request").await;
            assert!(e.error.message.contains("missing field"), "{subject}: {e}");
        }
    }
}

#[tokio::test]
async fn coordination_is_a_nats_micro_service_serving_exactly_its_declared_subjects() {
    let m = common::start(1).await;
    let info = &relay_testkit::micro_replies(&m.client, "INFO", "coordination", 1).await[0];
    let served: BTreeSet<String> = info["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["subject"].as_str().unwrap().to_string())
        .collect();
    let expected: BTreeSet<String> = rpc::ALL
        .iter()
        .filter(|r| r.service == rpc::service::COORDINATION)
        .flat_map(|r| {
            let harness = access::harness_may_call(r).then(|| access::harness_wildcard(r.subject));
            std::iter::once(r.subject.to_string()).chain(harness)
        })
        .collect();
    assert_eq!(served, expected);
    // And the registry no longer answers them.
    let registry = &relay_testkit::micro_replies(&m.client, "INFO", "session-registry", 1).await[0];
    let registry_serves: Vec<&str> = registry["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["subject"].as_str())
        .filter(|s| s.starts_with("action.") || s.starts_with("consensus."))
        .collect();
    assert!(registry_serves.is_empty(), "{registry_serves:?}");
}
