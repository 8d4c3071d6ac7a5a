//! The typed client against the real services: its subject table against what the mesh
//! announces, calls and their errors, and following the event log.

mod common;

use relay_client::ErrorCode;
use relay_client::contracts::events::{AppendRequest, NewEvent, SinceRequest};
use relay_client::contracts::session::{CreateRequest, SessionRef};
use relay_client::contracts::{access, rpc};
use std::collections::BTreeSet;
use std::time::Duration;

/// The client's methods are generated from the declarations; this checks the declarations
/// against what the running services register, service by service.
#[tokio::test]
async fn every_declared_subject_is_served_by_its_owner_and_nothing_undeclared_is_served() {
    let mesh = common::mesh(1).await;
    for service in common::SERVICES.iter().chain(&["agent-spawner"]) {
        let mut served = BTreeSet::new();
        for info in relay_testkit::micro_replies(mesh.client.nats(), "INFO", service, 1).await {
            for endpoint in info["endpoints"].as_array().unwrap() {
                served.insert(endpoint["subject"].as_str().unwrap().to_string());
            }
        }
        // Each subject, and the harness form of those a harness may call.
        let declared: BTreeSet<String> = rpc::ALL
            .iter()
            .filter(|r| r.service == *service)
            .flat_map(|r| {
                let harness = access::harness_may_call(r).then(|| access::harness_wildcard(r.subject));
                std::iter::once(common::served_at(r)).chain(harness)
            })
            .collect();
        assert_eq!(
            served, declared,
            "{service} serves other subjects than it is declared to"
        );
    }
}

#[tokio::test]
async fn typed_calls_return_contract_types_and_errors_keep_their_wire_code() {
    let mut mesh = common::mesh(1).await;
    let c = &mesh.client.clone();
    let created = c
        .session_create(&CreateRequest {
            title: Some("from the client".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let got = c
        .session_get(&SessionRef {
            session_id: created.session_id.clone(),
        })
        .await
        .unwrap();
    assert_eq!(got.session.unwrap().title.as_deref(), Some("from the client"));

    let missing = c
        .session_turns(&SessionRef {
            session_id: "no-such-session".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some(ErrorCode::NotFound), "{missing}");
    let models = c.cost_models(&Default::default()).await.unwrap();
    assert!(!models.models.is_empty());

    // Nobody serves agent.spawn once the spawner is gone: `unavailable`, not a hang. (Wait until
    // NATS has noticed the closed connection: a request in that moment would go to the dead
    // subscriber and sit out the 35 s spawn timeout.)
    mesh.spawner.kill9().await;
    relay_testkit::wait_until_unserved(c.nats(), "agent.spawn").await;
    let spawn = relay_client::contracts::hosts::SpawnRequest {
        session_id: created.session_id,
        agent_name: None,
        cli: "claude".into(),
        task: None,
        cwd: None,
        placement: None,
    };
    let err = c.agent_spawn(&spawn).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::Unavailable), "{err}");
    assert!(err.to_string().contains("agent.spawn"), "{err}");
}

fn event(session: &str, i: usize) -> NewEvent {
    NewEvent {
        event_id: None,
        event_type: "test.tick".into(),
        ts: None,
        session_id: Some(session.into()),
        agent_name: None,
        agent_id: None,
        workspace: None,
        payload: serde_json::json!({ "i": i }),
    }
}

#[tokio::test]
async fn follow_replays_from_a_seq_then_waits_for_new_events_without_gaps_or_repeats() {
    let mesh = common::mesh(1).await;
    let c = mesh.client.clone().with_timeout(Duration::from_secs(10));
    let writer_client = c.clone();
    let append = move |session: String, from: usize, n: usize| {
        let c = writer_client.clone();
        async move {
            let events = (from..from + n).map(|i| event(&session, i)).collect();
            c.event_append(&AppendRequest::Batch { events }).await.unwrap()
        }
    };
    let stored = append("followed".into(), 0, 300).await;
    let tenth = stored.appended[9].seq;

    // From after the 10th: the 290 stored, then 700 more while following, interleaved with
    // another session's events the filter leaves out.
    let mut stream = c
        .follow(SinceRequest {
            seq: tenth,
            session_ids: Some(vec!["followed".into()]),
            limit: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    let writer = tokio::spawn(async move {
        for round in 0..7 {
            append("other".into(), 0, 50).await;
            append("followed".into(), 300 + round * 100, 100).await;
        }
    });
    let mut seen = Vec::new();
    while seen.len() < 990 {
        let e = stream
            .next_within(Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the stream stalled");
        assert_eq!(e.session_id.as_deref(), Some("followed"));
        seen.push((e.seq, e.payload["i"].as_u64().unwrap() as usize));
    }
    writer.await.unwrap();
    let indexes: Vec<usize> = seen.iter().map(|(_, i)| *i).collect();
    assert_eq!(indexes, (10..1000).collect::<Vec<_>>(), "every event once, in order");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "seq increases");
    assert!(stream.caught_up());
    assert_eq!(stream.next_within(Duration::from_millis(1500)).await.unwrap(), None);
}

/// Postgres stores no NUL in text: a NUL in any id or text field of any request is the
/// caller's mistake (invalid_request, or simply not found), never an internal error.
#[tokio::test]
async fn a_nul_character_in_any_field_of_any_subject_is_never_an_internal_error() {
    let mesh = common::mesh(1).await;
    let nats = mesh.client.nats();
    // A session and an agent that exist, so handlers get past their lookups to the writes.
    relay_testkit::expect_ok(nats, "session.create", serde_json::json!({"sessionId": "nul"})).await;
    let fields = [
        "sessionId",
        "agentId",
        "requestId",
        "questionId",
        "deliveryId",
        "messageId",
        "title",
        "query",
        "message",
        "tool",
        "command",
        "model",
        "reason",
        "answer",
        "cli",
        "name",
    ];
    let mut internal = Vec::new();
    let mut table = std::collections::BTreeMap::<String, usize>::new();
    for subject in rpc::ALL.iter().map(|r| r.subject) {
        for field in fields {
            let mut body = serde_json::json!({"sessionId": "nul", "agentId": "a", "tool": "Bash", "command": "ls"});
            body[field] = serde_json::json!("x\u{0}y");
            let code = match relay_testkit::call_json(nats, subject, body.clone()).await {
                Ok(_) => "ok".to_string(),
                Err(e) => e.code().as_str().to_string(),
            };
            *table.entry(code.clone()).or_default() += 1;
            if code == "internal" {
                internal.push(format!("{subject} {field}"));
            }
        }
    }
    println!("answers to NUL-bearing requests: {table:?}");
    assert_eq!(internal, Vec::<String>::new(), "internal errors");
}

/// Ids end up in keys, subjects and Postgres NOTIFY payloads (8,000 bytes at most): an 8 KB
/// `agentId` on `delivery.flush` once answered `internal`. Every subject refuses any id field
/// longer than `MAX_ID_CHARS` characters with `invalid_request` naming it, and takes one of exactly that
/// length.
#[tokio::test]
async fn every_subject_refuses_an_id_longer_than_the_documented_maximum() {
    use relay_client::contracts::MAX_ID_CHARS;
    let mesh = common::mesh(1).await;
    let nats = mesh.client.nats();
    let long = "a".repeat(8_000);
    for field in [
        "sessionId",
        "agentId",
        "deliveryId",
        "requestId",
        "questionId",
        "messageId",
    ] {
        for subject in rpc::ALL.iter().map(common::served_at) {
            let subject = subject.as_str();
            let mut body = serde_json::json!({"sessionId": "s", "agentId": "a", "tool": "Bash"});
            body[field] = serde_json::json!(long);
            let err = relay_testkit::call_json(nats, subject, body).await.expect_err(subject);
            assert_eq!(err.code(), ErrorCode::InvalidRequest, "{subject} {field}: {err}");
            assert!(err.error.message.contains(field), "{subject}: {err}");
        }
    }
    let ids = serde_json::json!({"agentIds": ["a", "b".repeat(MAX_ID_CHARS + 1)], "sessionId": "s", "message": "hi"});
    let err = relay_testkit::call_json(nats, "session.sendMessage", ids)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidRequest, "{err}");

    // Exactly the maximum is an id like any other: here, one nobody knows.
    let at_max = serde_json::json!({"agentId": "c".repeat(MAX_ID_CHARS)});
    let err = relay_testkit::call_json(nats, "delivery.flush", at_max)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound, "{err}");
}
