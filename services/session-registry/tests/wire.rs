//! The registry as seen on the wire: errors for garbage, the micro service protocol, events,
//! trace context, replicas in one queue group, and restarts (graceful and kill -9).

mod common;
use common::Mesh;
use futures::StreamExt;
use relay_contracts::{Rpc, access, rpc};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

/// Every RPC the registry serves.
fn subjects() -> Vec<&'static str> {
    rpc::ALL
        .iter()
        .filter(|r| r.service == rpc::service::SESSION_REGISTRY)
        .map(|r| r.subject)
        .collect()
}

/// The subjects and, for those a harness may call, their harness form.
fn endpoints() -> Vec<String> {
    rpc::ALL
        .iter()
        .filter(|r| r.service == rpc::service::SESSION_REGISTRY)
        .flat_map(|r| {
            let harness = access::harness_may_call(r).then(|| access::harness_wildcard(r.subject));
            std::iter::once(r.subject.to_string()).chain(harness)
        })
        .collect()
}

/// Subjects whose request has no required field.
const NO_REQUIRED_FIELDS: &[&str] = &[
    rpc::SessionCreate::SUBJECT,
    rpc::SessionList::SUBJECT,
    rpc::SessionGetStatusCounts::SUBJECT,
    rpc::KeyList::SUBJECT,
    rpc::WorkspaceList::SUBJECT,
    rpc::AgentList::SUBJECT,
    rpc::ChannelList::SUBJECT,
    rpc::PromptList::SUBJECT,
    rpc::HostList::SUBJECT,
];

async fn raw(m: &Mesh, subject: &str, body: &[u8]) -> async_nats::Message {
    m.client
        .request(subject.to_string(), body.to_vec().into())
        .await
        .expect("a reply")
}

#[tokio::test]
async fn every_subject_answers_garbage_with_invalid_request_and_micro_error_headers() {
    let m = common::start(1).await;
    let garbage: [&[u8]; 4] = [b"{not json", b"\xff\xfe\x00binary", b"[1,2,3]", b"\"a string\""];
    for subject in subjects() {
        for body in garbage {
            let reply = raw(&m, subject, body).await;
            let headers = reply
                .headers
                .as_ref()
                .unwrap_or_else(|| panic!("{subject}: no error headers"));
            assert_eq!(
                headers
                    .get("Nats-Service-Error-Code")
                    .map(async_nats::HeaderValue::as_str),
                Some("400"),
                "{subject}"
            );
            assert!(
                headers
                    .get("Nats-Service-Error")
                    .is_some_and(|v| v.as_str().contains(subject)),
                "{subject}"
            );
            let err: Value = serde_json::from_slice(&reply.payload).unwrap();
            assert_eq!(err["error"]["code"], "invalid_request", "{subject}: {err}");
            assert_eq!(err["error"]["retryable"], false);
            assert!(err["error"]["message"].as_str().unwrap().contains(subject));
        }
    }
    // Still alive and serving after all that.
    m.ok(rpc::SessionGetStatusCounts::SUBJECT, json!({})).await;
}

#[tokio::test]
async fn every_subject_names_the_missing_field() {
    let m = common::start(1).await;
    for subject in subjects().iter().filter(|s| !NO_REQUIRED_FIELDS.contains(s)) {
        let e = m.err(subject, json!({}), "invalid_request").await;
        assert!(e.error.message.contains("missing field"), "{subject}: {e}");
    }
    for subject in NO_REQUIRED_FIELDS {
        m.ok(subject, json!({})).await;
    }
    // Wrong types are named too.
    let e = m
        .err(rpc::SessionGet::SUBJECT, json!({"sessionId": 42}), "invalid_request")
        .await;
    assert!(e.error.message.contains("invalid type"), "{e}");
    assert!(e.error.details.as_ref().unwrap()["column"].is_u64());
}

#[tokio::test]
async fn an_empty_body_is_an_empty_request() {
    let m = common::start(1).await;
    let reply = raw(&m, rpc::SessionGetStatusCounts::SUBJECT, b"").await;
    assert!(reply.headers.is_none());
    let counts: Value = serde_json::from_slice(&reply.payload).unwrap();
    assert_eq!(counts["all"], 0);
}

#[tokio::test]
async fn the_registry_is_a_nats_micro_service_listing_every_subject() {
    let m = common::start(1).await;
    let pings = relay_testkit::micro_replies(&m.client, "PING", "session-registry", 1).await;
    assert_eq!(pings.len(), 1);
    assert_eq!(pings[0]["type"], "io.nats.micro.v1.ping_response");

    let info = &relay_testkit::micro_replies(&m.client, "INFO", "session-registry", 1).await[0];
    let served: BTreeSet<&str> = info["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["subject"].as_str().unwrap())
        .collect();
    let endpoints = endpoints();
    let expected: BTreeSet<&str> = endpoints.iter().map(String::as_str).collect();
    assert_eq!(served, expected);
    assert!(
        info["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["queue_group"] == "q")
    );

    common::create(&m).await;
    common::create(&m).await;
    let stats = &relay_testkit::micro_replies(&m.client, "STATS", "session-registry", 1).await[0];
    let create = stats["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subject"] == rpc::SessionCreate::SUBJECT)
        .unwrap();
    assert_eq!(create["num_requests"], 2);
}

/// Collects messages from `sub` until `quiet` passes without one.
async fn drain(sub: &mut async_nats::Subscriber, quiet: Duration) -> Vec<async_nats::Message> {
    let mut out = Vec::new();
    while let Ok(Some(msg)) = tokio::time::timeout(quiet, sub.next()).await {
        out.push(msg);
    }
    out
}

#[tokio::test]
async fn events_are_published_after_commit_on_typed_subjects_and_the_catch_all() {
    let m = common::start(1).await;
    let mut typed = m.client.subscribe("session.>").await.unwrap();
    m.client.flush().await.unwrap();

    let claude = json!({"kind": "adapter", "adapterName": "claude"});
    let sent = m
        .ok(
            rpc::SessionSendMessage::SUBJECT,
            json!({"sessionId": "ev", "agent": claude, "message": "hi"}),
        )
        .await;
    // A failed request emits nothing.
    m.err(
        rpc::SessionSendMessage::SUBJECT,
        json!({"sessionId": "ev", "message": "hi", "agentIds": ["ghost"]}),
        "not_found",
    )
    .await;
    m.ok(rpc::SessionClose::SUBJECT, json!({"sessionId": "ev", "reason": "bye"}))
        .await;

    let msgs = drain(&mut typed, Duration::from_millis(500)).await;
    let envelopes: Vec<Value> = msgs
        .iter()
        .filter(|m| m.subject.as_str() == relay_contracts::subjects::session::EVENT)
        .map(|m| serde_json::from_slice(&m.payload).unwrap())
        .collect();
    let types: Vec<&str> = envelopes.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["created", "agent.added", "turn.started", "user_message.sent", "closed"]
    );
    let seqs: Vec<i64> = envelopes.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "seq increases: {seqs:?}");
    assert!(
        envelopes
            .iter()
            .all(|e| e["sessionId"] == "ev" && e["eventId"].is_string() && e["timestamp"].is_i64())
    );

    // Each envelope's payload is also published alone on session.<type>. (`session.>` also
    // sees the requests themselves; they are not events.)
    let typed_subjects: Vec<&str> = msgs
        .iter()
        .map(|m| m.subject.as_str())
        .filter(|subject| *subject != relay_contracts::subjects::session::EVENT && !subjects().contains(subject))
        .collect();
    assert_eq!(
        typed_subjects,
        [
            "session.created",
            "session.agent.added",
            "session.turn.started",
            "session.user_message.sent",
            "session.closed"
        ]
    );
    let sent_event: Value = serde_json::from_slice(
        &msgs
            .iter()
            .find(|m| m.subject.as_str() == "session.user_message.sent")
            .unwrap()
            .payload,
    )
    .unwrap();
    assert_eq!(sent_event["messageId"], sent["messageId"]);
    assert_eq!(sent_event["turnNumber"], 1);
    assert_eq!(sent_event["content"], "hi");
    let closed: Value = serde_json::from_slice(
        &msgs
            .iter()
            .find(|m| m.subject.as_str() == "session.closed")
            .unwrap()
            .payload,
    )
    .unwrap();
    assert_eq!(closed, json!({"sessionId": "ev", "reason": "bye"}));
}

#[tokio::test]
async fn the_callers_trace_context_reaches_the_events_the_request_caused() {
    let m = common::start(1).await;
    let mut created = m.client.subscribe("session.created").await.unwrap();
    m.client.flush().await.unwrap();

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01").as_str());
    let reply = m
        .client
        .request_with_headers(
            rpc::SessionCreate::SUBJECT.to_string(),
            headers,
            br#"{"sessionId":"traced"}"#.to_vec().into(),
        )
        .await
        .unwrap();
    assert!(reply.headers.is_none(), "no error");

    let event = tokio::time::timeout(Duration::from_secs(5), created.next())
        .await
        .unwrap()
        .unwrap();
    let traceparent = event
        .headers
        .as_ref()
        .and_then(|h| h.get("traceparent"))
        .expect("traceparent on the event")
        .to_string();
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts[1], trace_id, "same trace: {traceparent}");
    assert_ne!(parts[2], "00f067aa0ba902b7", "a new span inside the registry");
}

#[tokio::test]
async fn two_replicas_in_one_queue_group_both_serve() {
    let m = common::start(2).await;
    let mut ids = Vec::new();
    for i in 0..200 {
        let id = format!("r-{i}");
        m.ok(rpc::SessionCreate::SUBJECT, json!({"sessionId": id})).await;
        ids.push(id);
    }
    let stats = relay_testkit::micro_replies(&m.client, "STATS", "session-registry", 2).await;
    assert_eq!(stats.len(), 2);
    let per_replica: Vec<i64> = stats
        .iter()
        .map(|st| {
            st["endpoints"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["subject"] == rpc::SessionCreate::SUBJECT)
                .unwrap()["num_requests"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(per_replica.iter().sum::<i64>(), 200);
    assert!(
        per_replica.iter().all(|n| *n > 0),
        "both replicas served: {per_replica:?}"
    );
    // Either replica reads what the other wrote.
    assert_eq!(
        m.ok(rpc::SessionList::SUBJECT, json!({"limit": 500})).await["total"],
        200
    );
}

#[tokio::test]
async fn sigterm_shuts_down_cleanly_and_a_restart_finds_everything() {
    let mut m = common::start(1).await;
    let claude = json!({"kind": "adapter", "adapterName": "claude"});
    m.ok(
        rpc::SessionSendMessage::SUBJECT,
        json!({"sessionId": "keep", "agent": claude, "message": "remember me"}),
    )
    .await;
    m.ok(rpc::SessionClose::SUBJECT, json!({"sessionId": "keep"})).await;
    let before = m.ok(rpc::SessionGet::SUBJECT, json!({"sessionId": "keep"})).await;

    assert!(m.replicas[0].terminate().await, "exit status 0 after SIGTERM");
    m.replicas.clear();
    relay_testkit::wait_until_unserved(&m.client, rpc::SessionGet::SUBJECT).await;
    m.err(rpc::SessionGet::SUBJECT, json!({"sessionId": "keep"}), "unavailable")
        .await;
    m.add_replica().await;

    assert_eq!(
        m.ok(rpc::SessionGet::SUBJECT, json!({"sessionId": "keep"})).await,
        before
    );
    let msgs = m.ok(rpc::SessionMessages::SUBJECT, json!({"sessionId": "keep"})).await;
    assert_eq!(msgs["messages"][0]["contentText"], "remember me");
}

/// kill -9 of one of two replicas while 8 callers send messages. Each caller retries a failed
/// send with the same messageId until it is acknowledged. Afterwards every acknowledged message
/// is stored (lost = 0) and none is stored twice (duplicated = 0).
#[tokio::test]
async fn a_replica_killed_mid_load_loses_and_duplicates_nothing() {
    let mut m = common::start(2).await;
    let claude = json!({"kind": "adapter", "adapterName": "claude"});
    for c in 0..8 {
        m.ok(
            rpc::SessionSendMessage::SUBJECT,
            json!({"sessionId": format!("load-{c}"), "agent": claude, "message": "start"}),
        )
        .await;
    }
    let per_caller = 150;
    let mut callers = Vec::new();
    for c in 0..8 {
        let client = m.client.clone();
        callers.push(tokio::spawn(async move {
            let (mut acked, mut retries) = (Vec::new(), 0u32);
            for i in 0..per_caller {
                let id = format!("m-{c}-{i}");
                let req = json!({"sessionId": format!("load-{c}"), "message": format!("message {i}"), "messageId": id});
                loop {
                    match relay_bus::client::request::<_, Value>(
                        &client,
                        rpc::SessionSendMessage::SUBJECT,
                        &req,
                        Duration::from_secs(2),
                    )
                    .await
                    {
                        Ok(_) => break,
                        Err(e) => {
                            assert!(e.error.retryable || e.code().as_str() == "conflict", "unexpected {e}");
                            retries += 1;
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                acked.push(id);
            }
            (acked, retries)
        }));
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    m.replicas[0].kill9().await;
    m.replace_first_replica().await;

    let mut acked = Vec::new();
    let mut retries = 0;
    for c in callers {
        let (a, r) = c.await.unwrap();
        acked.extend(a);
        retries += r;
    }
    let pool = m.db.pool().await;
    let stored: Vec<(String, i64)> = sqlx::query_as(
        "SELECT message_id, count(*) FROM registry_messages WHERE message_id LIKE 'm-%' GROUP BY message_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let stored_ids: HashSet<&str> = stored.iter().map(|(id, _)| id.as_str()).collect();
    let lost = acked.iter().filter(|id| !stored_ids.contains(id.as_str())).count();
    let duplicated = stored.iter().filter(|(_, n)| *n > 1).count();
    let per_session: Vec<i64> = sqlx::query_scalar(
        "SELECT count(*) FROM registry_messages WHERE session_id LIKE 'load-%' GROUP BY session_id ORDER BY session_id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    eprintln!(
        "kill -9 under load: acked={} lost={lost} duplicated={duplicated} retries={retries}",
        acked.len()
    );
    assert_eq!(acked.len(), 8 * per_caller);
    assert_eq!(lost, 0);
    assert_eq!(duplicated, 0);
    assert_eq!(
        per_session,
        vec![1 + per_caller as i64; 8],
        "start message plus each acked send, once"
    );
}

#[test]
fn the_reference_subject_table_lists_exactly_the_served_subjects() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference/subjects.md")).unwrap();
    // Only the registry's own section: the event catalogue elsewhere names session.* events.
    let section = readme
        .split("## Session registry subjects")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    let documented: BTreeSet<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|subject| {
            ["session.", "key.", "workspace."]
                .iter()
                .any(|p| subject.starts_with(p))
                // agent.* rows of the section belong to several services: only the registry's.
                || relay_contracts::rpc::find(subject).is_some_and(|r| r.service == relay_contracts::rpc::service::SESSION_REGISTRY)
        })
        .map(String::from)
        .collect();
    let served: BTreeSet<String> = subjects().iter().map(std::string::ToString::to_string).collect();
    assert_eq!(
        documented, served,
        "docs/reference/subjects.md's subject table and the registry disagree"
    );
}

#[tokio::test]
async fn an_unreachable_otlp_collector_does_not_stop_the_registry_serving() {
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{closed_port}");
    let env = [
        ("RELAY_TELEMETRY__OTLP_ENDPOINT", endpoint.as_str()),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
    ];
    let m = relay_testkit::Cluster::start(common::BIN, "session-registry", 1, &env).await;
    for _ in 0..20 {
        common::create(&m).await;
    }
    assert_eq!(m.ok(rpc::SessionGetStatusCounts::SUBJECT, json!({})).await["all"], 20);
}
