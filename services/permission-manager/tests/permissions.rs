//! The permission manager over the wire: a private NATS, a fresh database, the real registry
//! (for approvalPolicyOverride) and event log. Harness side: see agent-harness/tests/pty.rs.

use futures::StreamExt;
use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::time::Duration;

const MANAGER: &str = "permission-manager";

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
}

async fn mesh(env: &[(&str, &str)]) -> Mesh {
    let m = Cluster::start(&relay_testkit::bin_path(MANAGER), MANAGER, 1, env).await;
    let services = vec![
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    relay_testkit::wait_for_instances(&m.client, "session-registry", 1).await;
    relay_testkit::wait_for_instances(&m.client, "event-ingest", 1).await;
    Mesh { m, _services: services }
}

impl Mesh {
    async fn session(&self, id: &str) {
        self.m.ok("session.create", json!({"sessionId": id})).await;
    }

    async fn ask(&self, session: &str, tool: &str, command: Option<&str>) -> Value {
        self.m
            .ok(
                "permission.request",
                json!({"agentId": "agent-1", "sessionId": session, "tool": tool, "command": command,
                       "description": format!("{tool} wants to run")}),
            )
            .await
    }

    /// A question "Go?" from agent-1 in `session`, answered "yes".
    async fn asked_and_answered(&self, session: &str) -> Value {
        let q = self
            .m
            .ok(
                "question.ask",
                json!({"agentId": "agent-1", "sessionId": session, "question": "Go?"}),
            )
            .await;
        self.m
            .ok(
                "question.answer",
                json!({"questionId": q["questionId"], "answer": "yes"}),
            )
            .await;
        q
    }

    async fn pending(&self, filter: Value) -> Vec<Value> {
        self.m.ok("permission.list", filter).await["permissions"]
            .as_array()
            .unwrap()
            .clone()
    }
}

fn verdict(r: &Value) -> (&str, &str, &str) {
    (
        r["decision"].as_str().unwrap(),
        r["riskLevel"].as_str().unwrap(),
        r["decidedBy"].as_str().unwrap_or("-"),
    )
}

#[tokio::test]
async fn every_default_policy_branch_decides_as_the_seed_says() {
    let h = mesh(&[]).await;
    h.session("s").await;
    for tool in ["Read", "glob", "Grep"] {
        let r = h.ask("s", tool, None).await;
        assert_eq!(verdict(&r), ("approved", "low", "policy:read-only-tools"), "{tool}");
    }
    for cmd in ["ls -la", "pwd", "git status", "git log --oneline", "git diff"] {
        let r = h.ask("s", "Bash", Some(cmd)).await;
        assert_eq!(verdict(&r), ("approved", "low", "policy:safe-shell"), "{cmd}");
    }
    for cmd in [
        "rm -rf target",
        "psql -c 'drop table users'",
        "truncate -s0 log",
        "ls && rm x",
    ] {
        let r = h.ask("s", "Bash", Some(cmd)).await;
        assert_eq!(verdict(&r), ("pending", "critical", "-"), "{cmd}");
    }
    for (tool, cmd) in [("Bash", Some("cargo build")), ("Write", None), ("WebFetch", None)] {
        let r = h.ask("s", tool, cmd).await;
        assert_eq!(verdict(&r), ("pending", "medium", "-"), "{tool} {cmd:?}");
    }
    // Pending ones are listed with their risk; decided ones are not.
    let pending = h.pending(json!({"sessionId": "s"})).await;
    let risks: Vec<&str> = pending.iter().map(|p| p["riskLevel"].as_str().unwrap()).collect();
    assert_eq!(
        risks,
        [
            "critical", "critical", "critical", "critical", "medium", "medium", "medium"
        ]
    );
}

#[tokio::test]
async fn the_sessions_approval_policy_override_wins_over_the_rules() {
    let h = mesh(&[]).await;
    for (session, policy) in [("full", "full-access"), ("reject", "reject"), ("ask", "always-ask")] {
        h.session(session).await;
        h.m.ok(
            "session.update",
            json!({"sessionId": session, "approvalPolicyOverride": policy}),
        )
        .await;
    }
    let r = h.ask("full", "Bash", Some("rm -rf /tmp/x")).await;
    assert_eq!(verdict(&r), ("approved", "critical", "session:full-access"));
    let r = h.ask("reject", "Read", None).await;
    assert_eq!(verdict(&r), ("denied", "low", "session:reject"));
    let r = h.ask("ask", "Read", None).await;
    assert_eq!(verdict(&r), ("pending", "low", "-"));
    // Cleared: the rules decide again.
    h.m.ok(
        "session.update",
        json!({"sessionId": "ask", "approvalPolicyOverride": null}),
    )
    .await;
    assert_eq!(h.ask("ask", "Read", None).await["decision"], "approved");
}

/// Without the registry the override is unknown (it might be `reject`): nothing is
/// auto-approved, a human decides.
#[tokio::test]
async fn nothing_is_auto_approved_when_the_session_policy_cannot_be_read() {
    let m = Cluster::start(&relay_testkit::bin_path(MANAGER), MANAGER, 1, &[]).await;
    let r = m
        .ok(
            "permission.request",
            json!({"agentId": "a", "sessionId": "s", "tool": "Read", "description": ""}),
        )
        .await;
    assert_eq!(r["decision"], "pending");
    assert_eq!(r["riskLevel"], "low");
}

#[tokio::test]
async fn approve_and_deny_reach_the_asking_harness_and_wrong_ones_are_clear_errors() {
    let h = mesh(&[]).await;
    h.session("s").await;
    // The harness side of agent-1: takes decisions on agent.agent-1.permission.
    let mut harness = h.m.client.subscribe("agent.agent-1.permission").await.unwrap();
    h.m.client.flush().await.unwrap();
    let rm = h.ask("s", "Bash", Some("rm -rf build")).await;
    let id = rm["requestId"].as_str().unwrap();
    let approve = h.m.call("permission.approve", json!({"requestId": id, "reason": "ok"}));
    let take = async {
        let msg = harness.next().await.unwrap();
        let body: Value = serde_json::from_slice(&msg.payload).unwrap();
        h.m.client
            .publish(msg.reply.unwrap(), r#"{"success":true}"#.into())
            .await
            .unwrap();
        body
    };
    let (approved, told) = tokio::join!(approve, take);
    let approved = approved.unwrap();
    assert_eq!(approved["harnessNotified"], true);
    assert_eq!(approved["permission"]["status"], "approved");
    assert_eq!(approved["permission"]["decidedBy"], "human");
    assert_eq!(told["requestId"], id);
    assert_eq!(told["decision"], "approved");

    let e =
        h.m.err("permission.approve", json!({"requestId": id}), "conflict")
            .await;
    assert!(e.to_string().contains("already approved"), "{e}");
    h.m.err("permission.deny", json!({"requestId": id}), "conflict").await;
    h.m.err("permission.approve", json!({"requestId": "no-such"}), "not_found")
        .await;
    // Decided by policy: not a human's to change either.
    let read = h.ask("s", "Read", None).await;
    h.m.err("permission.deny", json!({"requestId": read["requestId"]}), "conflict")
        .await;

    // Denied with a reason while no harness listens: stored, harnessNotified false.
    drop(harness);
    let push = h.ask("s", "Bash", Some("git push --force")).await;
    let denied =
        h.m.ok(
            "permission.deny",
            json!({"requestId": push["requestId"], "reason": "not on main"}),
        )
        .await;
    assert_eq!(denied["harnessNotified"], false);
    let stored = h.m.ok("permission.get", json!({"requestId": push["requestId"]})).await;
    assert_eq!(
        (stored["status"].as_str(), stored["reason"].as_str()),
        (Some("denied"), Some("not on main"))
    );
    h.m.err(
        "permission.approve",
        json!({"requestId": push["requestId"]}),
        "conflict",
    )
    .await;
}

#[tokio::test]
async fn bad_requests_are_invalid_request_errors() {
    let h = mesh(&[]).await;
    let base = json!({"agentId": "a", "sessionId": "s", "tool": "Bash", "description": ""});
    for (field, value) in [
        ("tool", json!("")),
        ("agentId", json!("  ")),
        ("sessionId", json!(null)),
        ("command", json!("a\u{0}b")),
    ] {
        let mut body = base.clone();
        body[field] = value;
        h.m.err("permission.request", body, "invalid_request").await;
    }
    h.m.err("permission.list", json!({"status": "maybe"}), "invalid_request")
        .await;
    h.m.err("permission.list", json!({"limit": 0}), "invalid_request").await;
    h.m.err(
        "question.ask",
        json!({"agentId": "a", "sessionId": "s", "question": ""}),
        "invalid_request",
    )
    .await;
    let garbage =
        h.m.client
            .request("permission.approve", "{not json".into())
            .await
            .unwrap();
    assert!(String::from_utf8_lossy(&garbage.payload).contains("invalid_request"));
    // Still serving.
    assert_eq!(h.ask_unknown_session().await, "approved");
}

impl Mesh {
    async fn ask_unknown_session(&self) -> String {
        let r = self.ask("never-created", "Read", None).await;
        r["decision"].as_str().unwrap().to_string()
    }
}

#[tokio::test]
async fn asking_twice_with_the_same_request_id_is_one_request() {
    let h = mesh(&[]).await;
    h.session("s").await;
    let body = json!({"requestId": "harness-chosen-1", "agentId": "agent-1", "sessionId": "s",
                      "tool": "Bash", "command": "rm -rf x", "description": "d"});
    let first = h.m.ok("permission.request", body.clone()).await;
    let again = h.m.ok("permission.request", body.clone()).await;
    assert_eq!(first, again);
    assert_eq!(first["requestId"], "harness-chosen-1");
    assert_eq!(h.pending(json!({})).await.len(), 1);
    h.m.ok("permission.approve", json!({"requestId": "harness-chosen-1"}))
        .await;
    assert_eq!(h.m.ok("permission.request", body.clone()).await["decision"], "approved");
    let mut other = body;
    other["agentId"] = json!("agent-2");
    h.m.err("permission.request", other, "conflict").await;
}

#[tokio::test]
async fn list_filters_by_agent_session_and_status() {
    let h = mesh(&[]).await;
    for (agent, session) in [("a1", "s1"), ("a1", "s2"), ("a2", "s1")] {
        h.m.ok(
            "permission.request",
            json!({"agentId": agent, "sessionId": session, "tool": "Write", "description": ""}),
        )
        .await;
    }
    h.m.ok(
        "permission.request",
        json!({"agentId": "a1", "sessionId": "s1", "tool": "Read", "description": ""}),
    )
    .await;
    let count = |v: Vec<Value>| v.len();
    assert_eq!(count(h.pending(json!({"agentId": "a1"})).await), 2);
    assert_eq!(count(h.pending(json!({"sessionId": "s1"})).await), 2);
    assert_eq!(count(h.pending(json!({"agentId": "a1", "sessionId": "s1"})).await), 1);
    assert_eq!(count(h.pending(json!({})).await), 3);
    assert_eq!(count(h.pending(json!({"status": "approved"})).await), 1);
    assert_eq!(count(h.pending(json!({"status": "all"})).await), 4);
    assert_eq!(count(h.pending(json!({"status": "all", "limit": 2})).await), 2);
}

/// Pending requests and questions are rows, not memory: a manager killed with SIGKILL and
/// started again still has them, and they can still be decided and answered.
#[tokio::test]
async fn pending_requests_and_questions_survive_a_restart() {
    let mut h = mesh(&[]).await;
    h.session("s").await;
    let rm = h.ask("s", "Bash", Some("rm -rf build")).await;
    let q =
        h.m.ok(
            "question.ask",
            json!({"agentId": "agent-1", "sessionId": "s", "question": "Which db?", "options": ["pg", "my"]}),
        )
        .await;
    assert_eq!(q["answer"], Value::Null);
    h.m.replace_first_replica().await;
    let pending = h.pending(json!({"agentId": "agent-1"})).await;
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["requestId"], rm["requestId"]);
    assert_eq!(pending[0]["command"], "rm -rf build");
    let questions = h.m.ok("question.list", json!({"agentId": "agent-1"})).await;
    assert_eq!(questions["questions"][0]["options"], json!(["pg", "my"]));
    h.m.ok("permission.approve", json!({"requestId": rm["requestId"]}))
        .await;
    let answered =
        h.m.ok(
            "question.answer",
            json!({"questionId": q["questionId"], "answer": "pg"}),
        )
        .await;
    assert_eq!(answered["question"]["status"], "answered");
    h.m.err(
        "question.answer",
        json!({"questionId": q["questionId"], "answer": "my"}),
        "conflict",
    )
    .await;
    h.m.err(
        "question.answer",
        json!({"questionId": "nope", "answer": "x"}),
        "not_found",
    )
    .await;
}

#[tokio::test]
async fn stale_requests_expire_with_the_configured_default_action() {
    let h = mesh(&[
        ("RELAY_PERMISSIONS__EXPIRE_AFTER_MS", "300"),
        ("RELAY_PERMISSIONS__EXPIRY_INTERVAL_MS", "50"),
        ("RELAY_PERMISSIONS__EXPIRY_DECISION", "denied"),
        ("RELAY_PERMISSIONS__EXPIRED_ANSWER", "no answer in time"),
    ])
    .await;
    h.session("s").await;
    let rm = h.ask("s", "Bash", Some("rm -rf build")).await;
    assert!(rm["decision"] == "pending");
    let q =
        h.m.ok(
            "question.ask",
            json!({"agentId": "agent-1", "sessionId": "s", "question": "Proceed?"}),
        )
        .await;
    let expired = wait_for(|| async {
        let p = h.m.ok("permission.get", json!({"requestId": rm["requestId"]})).await;
        (p["status"] != "pending").then_some(p)
    })
    .await;
    assert_eq!(
        (expired["status"].as_str(), expired["decidedBy"].as_str()),
        (Some("denied"), Some("expiry"))
    );
    let q = wait_for(|| async {
        let q = h.m.ok("question.get", json!({"questionId": q["questionId"]})).await;
        (q["status"] != "pending").then_some(q)
    })
    .await;
    assert_eq!(q["status"], "expired");
    assert_eq!(q["answer"], "no answer in time");
    h.m.err("permission.approve", json!({"requestId": rm["requestId"]}), "conflict")
        .await;
}

/// requested when pending, resolved for every decision (policy, human, expiry), in the log.
#[tokio::test]
async fn permission_and_question_events_reach_the_event_log_in_order() {
    let h = mesh(&[]).await;
    h.session("s").await;
    let mut live = h.m.client.subscribe("permission.>").await.unwrap();
    h.m.client.flush().await.unwrap();
    h.ask("s", "Read", None).await;
    let rm = h.ask("s", "Bash", Some("rm -rf build")).await;
    h.m.ok("permission.deny", json!({"requestId": rm["requestId"], "reason": "no"}))
        .await;
    h.asked_and_answered("s").await;
    let types = [
        "permission.requested",
        "permission.resolved",
        "question.requested",
        "question.resolved",
    ];
    let events = wait_for(|| async {
        let e =
            h.m.ok("event.query", json!({"types": types, "sessionIds": ["s"]}))
                .await["events"]
                .as_array()
                .unwrap()
                .clone();
        (e.len() >= 5).then_some(e)
    })
    .await;
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            let p = &e["payload"];
            let what = p["decision"].as_str().or(p["answer"].as_str()).unwrap_or("-");
            (e["type"].as_str().unwrap(), what)
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("permission.resolved", "approved"),
            ("permission.requested", "-"),
            ("permission.resolved", "denied"),
            ("question.requested", "-"),
            ("question.resolved", "yes"),
        ]
    );
    assert_eq!(events[0]["agentId"], "agent-1");
    // Published live too, on the event's own subject (the RPCs share the prefix; skip them).
    let mut live_types = Vec::new();
    while live_types.len() < 3 {
        let msg = tokio::time::timeout(Duration::from_secs(5), live.next())
            .await
            .unwrap()
            .unwrap();
        if msg.subject.as_str().ends_with("ed") {
            live_types.push(msg.subject.to_string());
        }
    }
    assert_eq!(
        live_types,
        ["permission.resolved", "permission.requested", "permission.resolved"]
    );
}

/// The outbox holds only what is on its way (and a recent window): rows it has forwarded are
/// deleted once `database.outbox_keep_ms` old, while every event stays in the log.
#[tokio::test]
async fn forwarded_outbox_rows_are_deleted_after_the_keep_window_and_stay_in_the_log() {
    let h = mesh(&[("RELAY_DATABASE__OUTBOX_KEEP_MS", "500")]).await;
    h.session("s").await;
    for _ in 0..20 {
        h.ask("s", "Read", None).await;
    }
    let pool = h.m.db.pool().await;
    let rows = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM permission_events")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    let resolved_in_log = || async {
        h.m.ok(
            "event.query",
            json!({"sessionIds": ["s"], "types": ["permission.resolved"], "limit": 100}),
        )
        .await["events"]
            .as_array()
            .unwrap()
            .len()
    };
    // Written with the requests (each resolved by policy at once) ...
    wait_for(|| async { (resolved_in_log().await == 20).then_some(()) }).await;
    // ... and gone from the outbox once forwarded and older than the window.
    wait_for(|| async { (rows().await == 0).then_some(()) }).await;
    assert_eq!(resolved_in_log().await, 20, "the log keeps every event");
}

/// Bounded growth: decided requests and answered questions are deleted once
/// `permissions.keep_resolved_ms` has passed; a pending request stays, however old.
#[tokio::test]
async fn resolved_requests_and_questions_are_deleted_after_the_keep_window_and_pending_ones_stay() {
    let h = mesh(&[("RELAY_PERMISSIONS__KEEP_RESOLVED_MS", "1000")]).await;
    h.session("s").await;
    for _ in 0..5 {
        // Approved by the default policy at once.
        assert_eq!(h.ask("s", "Read", None).await["decision"], "approved");
    }
    let pending = h.ask("s", "Bash", Some("rm -rf build")).await;
    assert_eq!(pending["decision"], "pending");
    let q = h.asked_and_answered("s").await;
    let listed = wait_for(|| async {
        let all = h.m.ok("permission.list", json!({"sessionId": "s"})).await["permissions"]
            .as_array()
            .unwrap()
            .clone();
        (all.len() == 1).then_some(all)
    })
    .await;
    assert_eq!(
        listed[0]["requestId"], pending["requestId"],
        "the pending request stays"
    );
    wait_for(|| async {
        let gone = h.m.call("question.get", json!({"questionId": q["questionId"]})).await;
        gone.err().filter(|e| e.code().as_str() == "not_found")
    })
    .await;
    // It can still be decided.
    h.m.ok("permission.approve", json!({"requestId": pending["requestId"]}))
        .await;
}
