//! Who may call what, over the real mesh with auth on: every subject of the contract registry
//! against every kind of identity (each service, the gateway, admin, a harness, an unknown
//! client). Allowed calls are answered by their service; every other one is refused by the
//! nats-server with a permission violation, and nothing of it is stored.

mod common;

use async_nats::{Client, ConnectOptions, Event};
use common::mesh;
use relay_client::contracts::access::{self, ADMIN, GATEWAY};
use relay_client::contracts::rpc::{ALL, Role, RpcInfo};
use relay_testkit::{expect_ok, wait_for};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::sync::mpsc;

/// A connection whose server errors (permission violations) are collected.
struct Conn {
    client: Client,
    errors: mpsc::UnboundedReceiver<String>,
}

impl Conn {
    async fn open(url: &str, opts: ConnectOptions) -> Conn {
        let (tx, errors) = mpsc::unbounded_channel();
        let client = opts
            .event_callback(move |e| {
                let tx = tx.clone();
                async move {
                    if let Event::ServerError(e) = e {
                        let _ = tx.send(e.to_string());
                    }
                }
            })
            .connect(url)
            .await
            .expect("connect");
        Conn { client, errors }
    }

    /// Violations reported so far, waiting until `expect` of them came.
    async fn violations(&mut self, expect: usize) -> Vec<String> {
        let mut out = Vec::new();
        while out.len() < expect {
            match tokio::time::timeout(Duration::from_secs(10), self.errors.recv()).await {
                Ok(Some(e)) => out.push(e),
                _ => break,
            }
        }
        // Anything more the server had to say arrives with the next round trip.
        self.client.flush().await.unwrap();
        while let Ok(e) = self.errors.try_recv() {
            out.push(e);
        }
        out
    }
}

/// Sends `[]` (which no contract accepts, so nothing can be stored) to every subject as this
/// connection would call it; returns the subjects that got an answer.
async fn call_every_subject(conn: &Conn, on: impl Fn(&RpcInfo) -> String) -> BTreeSet<&'static str> {
    let calls = ALL.iter().map(|r| {
        let subject = on(r);
        let client = conn.client.clone();
        async move {
            let reply = tokio::time::timeout(Duration::from_secs(3), client.request(subject, "[]".into())).await;
            matches!(reply, Ok(Ok(_))).then_some(r.subject)
        }
    });
    futures::future::join_all(calls).await.into_iter().flatten().collect()
}

fn violated(errors: &[String]) -> BTreeSet<String> {
    errors
        .iter()
        .filter_map(|e| e.split("Publish to \"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(String::from)
        .collect()
}

/// What each identity kind may call, stated from the contract's roles: the gateway what a
/// person may (an operator, viewer or admin key) and `key.verify`; a service only the calls its work needs (listed by name in
/// its permissions, never a wildcard, never its own subjects); admin everything.
fn expected(identity: &str, r: &RpcInfo) -> bool {
    match identity {
        ADMIN => true,
        GATEWAY => {
            r.roles.contains(&Role::Operator)
                || r.roles.contains(&Role::Viewer)
                || r.roles.contains(&Role::Admin)
                || r.subject == "key.verify"
        }
        service => {
            let p = access::permissions(service).unwrap();
            // A per-instance subject is allowed by its instances' wildcard (`agent.spawnOn.*`).
            let at = common::served_at(r);
            let per_instance = at != r.subject;
            r.roles.contains(&Role::Service)
                && p.publish_allow
                    .iter()
                    .any(|a| a == r.subject || (per_instance && access::subject_matches(a, &at)))
        }
    }
}

#[tokio::test]
async fn every_identity_calls_exactly_the_subjects_its_role_allows() {
    let m = mesh(2).await;
    let mut report = Vec::new();
    for identity in access::identities() {
        let creds = m.nats.creds(identity).unwrap();
        let opts = ConnectOptions::with_credentials_file(creds)
            .await
            .unwrap()
            .custom_inbox_prefix(access::inbox_prefix(identity));
        let mut conn = Conn::open(&m.nats.url, opts).await;
        let answered = call_every_subject(&conn, common::served_at).await;
        let allowed: BTreeSet<_> = ALL
            .iter()
            .filter(|r| expected(identity, r))
            .map(|r| r.subject)
            .collect();
        let denied = ALL.len() - allowed.len();
        let violations = violated(&conn.violations(denied).await);
        for r in ALL {
            let (was_answered, was_refused) =
                (answered.contains(r.subject), violations.contains(&common::served_at(r)));
            if allowed.contains(r.subject) {
                // agent.spawn answers too: the spawner serves it.
                assert!(
                    was_answered && !was_refused,
                    "{identity} may call {} but it was not answered",
                    r.subject
                );
            } else {
                assert!(
                    !was_answered && was_refused,
                    "{identity} may not call {} but it got through",
                    r.subject
                );
            }
        }
        report.push(format!("{identity}: {} allowed, {denied} refused", allowed.len()));
    }
    eprintln!("{}", report.join("\n"));
}

#[tokio::test]
async fn a_harness_calls_only_as_its_own_agent_on_its_own_subjects() {
    let m = mesh(2).await;
    let admin = m.client.nats().clone();
    // Agent `a1`'s harness, in workspace default.
    let creds = m.nats.harness_creds("a1", "default").unwrap();
    let opts = ConnectOptions::with_credentials(&creds)
        .unwrap()
        .custom_inbox_prefix(access::harness_inbox_prefix("a1"));
    let mut conn = Conn::open(&m.nats.url, opts).await;

    // On its own harness form it reaches exactly the subjects a harness may call.
    let answered = call_every_subject(&conn, |r| access::harness_subject("default", "a1", r.subject)).await;
    let harness_subjects: BTreeSet<_> = ALL
        .iter()
        .filter(|r| access::harness_may_call(r))
        .map(|r| r.subject)
        .collect();
    assert_eq!(answered, harness_subjects);
    // Plain subjects, and another agent's or workspace's harness form, the server refuses.
    let before = conn.violations(0).await.len();
    assert_eq!(before, 0, "the harness's own subjects are never refused");
    let refused = call_every_subject(&conn, |r| r.subject.to_string()).await;
    assert!(
        refused.is_empty(),
        "a harness got through on plain subjects: {refused:?}"
    );
    let others = call_every_subject(&conn, |r| access::harness_subject("default", "a2", r.subject)).await;
    assert!(others.is_empty());
    let elsewhere = call_every_subject(&conn, |r| access::harness_subject("acme", "a1", r.subject)).await;
    assert!(elsewhere.is_empty());
    let violations = violated(&conn.violations(3 * ALL.len()).await);
    assert_eq!(
        violations.len(),
        3 * ALL.len(),
        "every one of them is a publish violation"
    );

    // A pending permission of agent a1 stays pending whatever its harness tries.
    let session = "auth-s1";
    expect_ok(&admin, "session.create", json!({"sessionId": session})).await;
    let asked = request_as(
        &conn.client,
        &access::harness_subject("default", "a1", "permission.request"),
        json!({"agentId": "a1", "sessionId": session, "tool": "Bash", "command": "rm -rf /tmp/x",
               "description": "Bash wants to run"}),
    )
    .await;
    assert_eq!(asked["decision"], "pending", "{asked}");
    let request_id = asked["requestId"].as_str().unwrap().to_string();
    let decide = json!({"requestId": request_id, "reason": "self-approved"});
    for subject in [
        "permission.approve".to_string(),
        access::harness_subject("default", "a1", "permission.approve"),
        // A decision published where the permission manager would send it.
        "agent.a1.permission".to_string(),
    ] {
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            conn.client
                .request(subject, serde_json::to_vec(&decide).unwrap().into()),
        )
        .await;
    }
    let got = expect_ok(&admin, "permission.get", json!({"requestId": request_id})).await;
    assert_eq!(got["status"], "pending", "{got}");

    // It may not ask as another agent, nor append another agent's events.
    let as_other = request_as(
        &conn.client,
        &access::harness_subject("default", "a1", "permission.request"),
        json!({"agentId": "a2", "sessionId": session, "tool": "Bash", "description": "x"}),
    )
    .await;
    assert_eq!(as_other["error"]["code"], "forbidden", "{as_other}");
    let forged = request_as(
        &conn.client,
        &access::harness_subject("default", "a1", "event.append"),
        json!({"type": "tool.called", "sessionId": session, "agentId": "a2", "payload": {}}),
    )
    .await;
    assert_eq!(forged["error"]["code"], "forbidden", "{forged}");
    let own = request_as(
        &conn.client,
        &access::harness_subject("default", "a1", "event.append"),
        json!({"type": "tool.called", "sessionId": session, "payload": {"tool": "Read"}}),
    )
    .await;
    assert!(own["appended"][0]["seq"].is_number(), "{own}");
    let mine = expect_ok(
        &admin,
        "event.query",
        json!({"sessionIds": [session], "types": ["tool.called"]}),
    )
    .await;
    let agents: Vec<_> = mine["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["agentId"].clone())
        .collect();
    assert_eq!(agents, vec![json!("a1")], "only its own event, stamped with its agent");

    // Subscriptions: another agent's deliveries and any service's queue group are closed.
    let _theirs = conn.client.subscribe("agent.a2.deliver").await.unwrap();
    let _queue = conn.client.queue_subscribe("session.create", "q".into()).await.unwrap();
    let _harness_queue = conn
        .client
        .queue_subscribe(access::harness_wildcard("permission.request"), "q".into())
        .await
        .unwrap();
    let _all = conn.client.subscribe(">").await.unwrap();
    // The publish violations of the decisions above may still be arriving: read until the four
    // subscription violations are in (each comes within 10 s, or the test fails).
    let mut subs: Vec<String> = Vec::new();
    while subs.len() < 4 {
        let got = conn.violations(1).await;
        assert!(!got.is_empty(), "only these subscriptions were refused: {subs:?}");
        subs.extend(got.into_iter().filter(|e| e.contains("Subscription")));
    }
    assert_eq!(subs.len(), 4, "{subs:?}");
    // Its own deliveries it may take.
    let _mine = conn.client.subscribe("agent.a1.deliver").await.unwrap();
    assert!(conn.violations(0).await.is_empty());
    // The permission manager still serves everyone: nothing joined its queue group.
    let listed = expect_ok(&admin, "permission.list", json!({"sessionId": session})).await;
    assert_eq!(listed["permissions"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_client_without_credentials_cannot_connect_and_a_service_cannot_serve_another_services_subjects() {
    let m = mesh(1).await;
    let refused = async_nats::connect(&m.nats.url).await;
    assert!(
        matches!(&refused, Err(e) if e.kind() == async_nats::ConnectErrorKind::AuthorizationViolation),
        "an anonymous client was let in: {:?}",
        refused.map(|_| ())
    );
    let ingest = m.nats.creds("event-ingest").unwrap();
    let mut conn = Conn::open(
        &m.nats.url,
        ConnectOptions::with_credentials_file(ingest).await.unwrap(),
    )
    .await;
    let _take = conn
        .client
        .queue_subscribe("permission.approve", "q".into())
        .await
        .unwrap();
    let _snoop = conn.client.subscribe("_INBOX.gateway.>").await.unwrap();
    let v = conn.violations(2).await;
    assert_eq!(v.iter().filter(|e| e.contains("Subscription")).count(), 2, "{v:?}");
    // The permission manager is still the one answering.
    let listed = wait_for(|| async {
        relay_testkit::call_json(m.client.nats(), "permission.list", json!({}))
            .await
            .ok()
    })
    .await;
    assert!(listed["permissions"].is_array());
}

/// A raw request whose reply (or wire error) comes back as JSON.
async fn request_as(client: &Client, subject: &str, body: Value) -> Value {
    let reply = tokio::time::timeout(
        Duration::from_secs(10),
        client.request(subject.to_string(), serde_json::to_vec(&body).unwrap().into()),
    )
    .await
    .unwrap_or_else(|_| panic!("{subject} timed out"))
    .unwrap_or_else(|e| panic!("{subject}: {e}"));
    serde_json::from_slice(&reply.payload).unwrap()
}
