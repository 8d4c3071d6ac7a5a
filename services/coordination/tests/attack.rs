//! The registry subjects that act for someone else — `message.sendFor` (a message from whoever
//! coordination names), `message.actionResult` (a DM from an exposing agent) and
//! `session.agent.setTools` — attacked with every other identity of the mesh: the gateway,
//! each other service, an agent's harness (plain and harness forms). NATS must refuse the
//! publish (no answer); only coordination's own credentials get one.

mod common;
use relay_contracts::{access, rpc};
use serde_json::json;
use std::time::Duration;

/// The registry subjects only coordination may call.
fn for_coordination_only() -> Vec<&'static str> {
    let coordination = access::permissions(rpc::service::COORDINATION).unwrap();
    rpc::ALL
        .iter()
        .filter(|r| r.roles == rpc::SERVICE && r.service == rpc::service::SESSION_REGISTRY)
        .map(|r| r.subject)
        .filter(|s| coordination.publish_allow.iter().any(|a| a == s))
        .collect()
}

/// Whether `client` gets any answer on `subject` within 3 s.
async fn answered(client: &async_nats::Client, subject: &str) -> bool {
    let body = serde_json::to_vec(&json!({})).unwrap();
    matches!(
        tokio::time::timeout(Duration::from_secs(3), client.request(subject.to_string(), body.into())).await,
        Ok(Ok(_))
    )
}

#[tokio::test]
async fn only_coordination_may_send_for_others_or_set_an_agents_tools() {
    let m = common::start(1).await;
    let subjects = for_coordination_only();
    assert_eq!(
        subjects,
        ["session.agent.setTools", "message.sendFor", "message.actionResult"],
        "the subjects attacked here"
    );
    let session = common::create(&m).await;
    let agent = common::attach(
        &m,
        &session,
        "mallory",
        json!({"messaging": {"send": true, "receive": true}, "delivery": {"modes": ["immediate"]},
               "events": {"emits": []}, "lifecycle": {"release": true}}),
    )
    .await;
    let harness = relay_testkit::AsAgent::connect(&m.nats, &agent).await;
    // Every attempt at once: each refused one waits out its 3 s.
    let mut attempts: Vec<(String, async_nats::Client, String)> = Vec::new();
    for identity in access::identities()
        .into_iter()
        .filter(|i| ![rpc::service::COORDINATION, access::ADMIN].contains(i))
    {
        let client = m.nats.client_as(identity).await;
        for subject in &subjects {
            attempts.push((identity.to_string(), client.clone(), subject.to_string()));
        }
    }
    for subject in &subjects {
        for on in [subject.to_string(), harness.on(subject)] {
            attempts.push((format!("agent {agent}'s harness"), harness.client.clone(), on));
        }
    }
    let tried = attempts.len();
    let holes: Vec<String> = futures::future::join_all(attempts.into_iter().map(|(who, client, subject)| async move {
        answered(&client, &subject)
            .await
            .then(|| format!("{who} got an answer on {subject}"))
    }))
    .await
    .into_iter()
    .flatten()
    .collect();
    assert!(tried > 20, "{tried} attempts");
    assert!(holes.is_empty(), "{holes:#?}");
    // The one identity meant to: answered (an empty request is refused for what it lacks).
    let coordination = m.nats.client_as(rpc::service::COORDINATION).await;
    for subject in &subjects {
        assert!(
            answered(&coordination, subject).await,
            "coordination gets no answer on {subject}"
        );
    }
}
