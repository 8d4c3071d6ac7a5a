//! Control of a running turn over the real mesh: the fake agent (Claude Code's style) under a
//! harness, spawned through the gateway, is given work (`sleep`) and interrupted mid-turn —
//! by a cancel, and by messages sent with each `onBusy` strategy.

mod common;
use common::{Gateway, Mesh, free_port, gateway, mesh};
use relay_testkit::{ServiceProcess, wait_for};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;

/// What the fake agent says when Escape interrupts its work.
const INTERRUPTED: &str = "Interrupted by user";

struct World {
    m: Mesh,
    g: Gateway,
    surfaced: PathBuf,
    session: String,
    agent: String,
    _spawner: ServiceProcess,
}

async fn world() -> World {
    let m = mesh().await;
    let surfaced = std::env::temp_dir().join(format!("gw-turns-{}.log", free_port()));
    let spawner = common::spawner(&m, &surfaced).await;
    let g = gateway(&m, &[]).await;
    let (status, created) = g
        .post(
            "/api/v1/sessions",
            json!({"agent": "worker", "cli": "claude", "task": "hello"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let w = World {
        session: created["sessionId"].as_str().unwrap().to_string(),
        agent: created["agentId"].as_str().unwrap().to_string(),
        m,
        g,
        surfaced,
        _spawner: spawner,
    };
    w.until_typed("hello").await;
    w
}

impl World {
    async fn send(&self, body: Value) -> (StatusCode, Value) {
        self.g
            .post(&format!("/api/v1/sessions/{}/messages", self.session), body)
            .await
    }

    /// Waits until the agent was typed a message containing `text`.
    async fn until_typed(&self, text: &str) {
        wait_for(|| async {
            let typed = std::fs::read_to_string(&self.surfaced).unwrap_or_default();
            typed.contains(text).then_some(())
        })
        .await;
    }

    /// How many of the agent's output lines contain `text`.
    async fn said(&self, text: &str) -> usize {
        let (_, out) = self
            .g
            .get(&format!("/api/v1/agents/{}/output?limit=500", self.agent))
            .await;
        out["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["text"].as_str().unwrap_or_default().contains(text))
            .count()
    }

    async fn until_said(&self, text: &str, times: usize) {
        wait_for(|| async { (self.said(text).await >= times).then_some(()) }).await;
    }

    /// Whether the harness says its CLI is busy with a turn.
    async fn busy(&self) -> Option<bool> {
        let subject = format!("agent.{}.turn", self.agent);
        let state = relay_testkit::call_json(&self.m.client, &subject, json!({}))
            .await
            .ok()?;
        state["busy"].as_bool()
    }

    /// Once the agent is idle and its turn ended, gives it a minute of work (a turn of its
    /// own) and waits until it is busy with it.
    async fn make_busy(&self) {
        self.until_no_turn_runs().await;
        self.give_work().await;
    }

    /// Once the agent is idle, gives it a minute of work and waits until it is busy with it.
    async fn give_work(&self) {
        wait_for(|| async { (self.busy().await == Some(false)).then_some(()) }).await;
        let (status, sent) = self.send(json!({"message": "sleep 60000"})).await;
        assert_eq!(status, StatusCode::OK, "{sent}");
        wait_for(|| async { (self.busy().await == Some(true)).then_some(()) }).await;
    }

    async fn delivery(&self, id: &str) -> Value {
        self.g.get(&format!("/api/v1/deliveries/{id}")).await.1
    }

    async fn turns(&self) -> Vec<Value> {
        let (_, t) = self.g.get(&format!("/api/v1/sessions/{}/turns", self.session)).await;
        t["turns"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until no turn of the session is active: the registry saw the agent finish.
    async fn until_no_turn_runs(&self) {
        wait_for(|| async {
            let turns = self.turns().await;
            (!turns.is_empty() && turns.iter().all(|t| t["status"] != "active")).then_some(())
        })
        .await;
    }

    async fn deliveries(&self) -> Vec<Value> {
        let (_, d) = self
            .g
            .get(&format!("/api/v1/deliveries?sessionId={}&limit=1000", self.session))
            .await;
        d["deliveries"].as_array().cloned().unwrap_or_default()
    }

    async fn events(&self, kind: &str) -> Vec<Value> {
        let (_, e) = self
            .g
            .get(&format!(
                "/api/v1/events?sessionId={}&types={kind}&limit=1000",
                self.session
            ))
            .await;
        e["events"].as_array().cloned().unwrap_or_default()
    }
}

#[tokio::test]
async fn cancelling_a_running_turn_interrupts_the_cli_and_held_messages_stay_queued() {
    let w = world().await;
    w.make_busy().await;
    // Held for the agent's next idle moment, behind the running turn.
    let (status, held) = w.send(json!({"message": "after the cancel", "mode": "on-idle"})).await;
    assert_eq!(status, StatusCode::OK, "{held}");

    let (status, cancelled) =
        w.g.post(
            &format!("/api/v1/sessions/{}/interrupt", w.session),
            json!({"reason": "wrong task"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["interrupted"], json!([w.agent]), "{cancelled}");
    assert_eq!(cancelled["turn"]["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["turn"]["error"], "cancelled: wrong task", "{cancelled}");
    // The CLI took its interrupt key; the held message goes in once it is idle, once.
    w.until_said(INTERRUPTED, 1).await;
    w.until_typed("after the cancel").await;
    w.until_said("Received: after the cancel", 1).await;

    let turn_id = cancelled["turn"]["turnId"].as_str().unwrap();
    let turns = w.turns().await;
    let turn = turns
        .iter()
        .find(|t| t["turnId"] == turn_id)
        .expect("the turn is listed");
    assert_eq!(turn["status"], "cancelled", "{turns:?}");
    let completed = wait_for(|| async {
        w.events("session.turn.completed")
            .await
            .into_iter()
            .find(|e| e["payload"]["turnId"] == turn_id)
    })
    .await;
    assert_eq!(completed["payload"]["outcome"], "cancelled", "{completed}");
    assert_eq!(completed["payload"]["interrupted"], json!([w.agent]), "{completed}");
    assert!(
        !w.events("turn.interrupted").await.is_empty(),
        "the harness logged its interrupt"
    );

    // Nothing runs any more: a second cancel is a conflict, by turn id too.
    let (status, body) =
        w.g.post(&format!("/api/v1/sessions/{}/interrupt", w.session), json!({}))
            .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) =
        w.g.post(
            &format!("/api/v1/sessions/{}/turns/{turn_id}/cancel", w.session),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    // The agent route interrupts only what is running: nothing, once the agent is idle.
    wait_for(|| async { (w.busy().await == Some(false)).then_some(()) }).await;
    let (status, state) =
        w.g.post(&format!("/api/v1/agents/{}/interrupt", w.agent), json!({}))
            .await;
    assert_eq!(status, StatusCode::OK, "{state}");
    assert_eq!(state, json!({"busy": false, "interrupted": false}));

    // relayctl does the same from a shell.
    w.make_busy().await;
    let out = common::relayctl(&w.m, &["sessions", "interrupt", &w.session, "--reason", "from a shell"]);
    assert!(
        out.contains("cancelled") && out.contains(&format!("interrupted  {}", w.agent)),
        "{out}"
    );
    w.until_said(INTERRUPTED, 2).await;
}

#[tokio::test]
async fn a_message_for_a_busy_agent_is_refused_interrupts_or_rolls_back_as_its_sender_asks() {
    let w = world().await;
    w.make_busy().await;

    // reject: a conflict naming the running turn; nothing is stored or typed.
    let running = w
        .turns()
        .await
        .into_iter()
        .find(|t| t["status"] == "active")
        .expect("a running turn");
    let (status, body) = w.send(json!({"message": "REJECTED note", "onBusy": "reject"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let why = body["error"]["message"].as_str().unwrap();
    assert!(
        why.contains("busy") && why.contains(running["turnId"].as_str().unwrap()),
        "{body}"
    );

    // interrupt: the running turn is cancelled, then the message goes in a turn of its own.
    let (status, sent) = w
        .send(json!({"message": "INTERRUPTING note", "onBusy": "interrupt"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    assert_ne!(sent["turnId"], running["turnId"], "{sent}");
    w.until_said(INTERRUPTED, 1).await;
    w.until_typed("INTERRUPTING note").await;

    // rollback: as interrupt, and the cancelled turn's unfinished message is superseded by the
    // new one (the interrupting note ended with its own turn once the agent was idle).
    w.make_busy().await;
    let running = w
        .turns()
        .await
        .into_iter()
        .find(|t| t["status"] == "active")
        .expect("the second sleep's turn");
    assert_ne!(running["turnId"], sent["turnId"], "{running}");
    let (status, instead) = w.send(json!({"message": "ROLLBACK note", "onBusy": "rollback"})).await;
    assert_eq!(status, StatusCode::OK, "{instead}");
    w.until_said(INTERRUPTED, 2).await;
    w.until_typed("ROLLBACK note").await;
    let superseded: Vec<Value> = wait_for(|| async {
        let done: Vec<Value> = w
            .events("session.user_message.completed")
            .await
            .into_iter()
            .filter(|e| e["payload"]["outcome"] == "superseded")
            .collect();
        (!done.is_empty()).then_some(done)
    })
    .await;
    assert_eq!(superseded.len(), 1, "{superseded:?}");
    assert_eq!(superseded[0]["payload"]["supersededBy"], instead["messageId"]);
    assert_eq!(
        superseded[0]["payload"]["turnId"], running["turnId"],
        "the rolled-back turn's"
    );
    let cancelled = w
        .turns()
        .await
        .into_iter()
        .filter(|t| t["status"] == "cancelled")
        .count();
    assert_eq!(cancelled, 2);

    // An idle agent takes any of them at once; the refused note never reached it.
    w.until_said("Received: ROLLBACK note", 1).await;
    wait_for(|| async { (w.busy().await == Some(false)).then_some(()) }).await;
    let (status, body) = w.send(json!({"message": "CALM note", "onBusy": "reject"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    w.until_typed("CALM note").await;
    assert!(!std::fs::read_to_string(&w.surfaced).unwrap().contains("REJECTED note"));
    let (status, body) = w.send(json!({"message": "x", "onBusy": "later"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn urgent_messages_go_before_waiting_ones_and_a_passed_deadline_fails_the_delivery() {
    let w = world().await;
    wait_for(|| async { (w.busy().await == Some(false)).then_some(()) }).await;
    // Paused, the agent's messages wait in its queue.
    let (status, body) = w.g.post_empty(&format!("/api/v1/agents/{}/pause", w.agent)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for body in [
        json!({"message": "first normal"}),
        json!({"message": "second normal", "priority": "low"}),
        json!({"message": "the urgent one", "priority": "urgent"}),
    ] {
        let (status, sent) = w.send(body).await;
        assert_eq!(status, StatusCode::OK, "{sent}");
    }
    let (status, late) = w
        .send(json!({"message": "too late", "deadline": "2020-01-01T00:00:00Z"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{late}");
    let late = late["deliveryIds"][0].as_str().unwrap().to_string();
    let (status, body) = w.send(json!({"message": "x", "deadline": "tomorrow"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, body) = w.g.post_empty(&format!("/api/v1/agents/{}/resume", w.agent)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    w.until_typed("second normal").await;
    let typed = std::fs::read_to_string(&w.surfaced).unwrap();
    let at = |text: &str| typed.find(text).unwrap_or_else(|| panic!("{text} typed: {typed}"));
    assert!(
        at("the urgent one") < at("first normal") && at("first normal") < at("second normal"),
        "urgent first, then the rest in order: {typed}"
    );
    assert!(typed.contains("[urgent priority]"), "the agent is told: {typed}");
    // The harness logs what it gave the agent as seed 000 transcript chunks, numbered in order.
    let chunks = wait_for(|| async {
        let c = w.events("transcript.chunk").await;
        let users: Vec<(i64, String)> = c
            .iter()
            .filter(|e| e["payload"]["chunk"]["role"] == "user")
            .map(|e| {
                let chunk = &e["payload"]["chunk"];
                (
                    chunk["sequence"].as_i64().unwrap(),
                    chunk["content"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        users
            .iter()
            .any(|(_, t)| t.starts_with("second normal"))
            .then_some(users)
    })
    .await;
    let seq_of = |text: &str| chunks.iter().find(|(_, t)| t.starts_with(text)).unwrap().0;
    assert!(seq_of("hello") < seq_of("the urgent one"), "{chunks:?}");
    assert!(seq_of("the urgent one") < seq_of("first normal"), "{chunks:?}");

    let failed = wait_for(|| async {
        let d = w.delivery(&late).await;
        (d["status"] == "failed").then_some(d)
    })
    .await;
    assert!(failed["reason"].as_str().unwrap().starts_with("deadline"), "{failed}");
    assert!(!typed.contains("too late"), "never typed: {typed}");
}

#[tokio::test]
async fn a_workspace_delivery_policy_sets_the_default_mode_limits_the_modes_and_caps_what_waits() {
    let w = world().await;
    wait_for(|| async { (w.busy().await == Some(false)).then_some(()) }).await;
    let policy = json!({"defaultMode": "on-idle", "allowedModes": ["immediate"], "maxPendingPerAgent": 2});
    let (status, ws) =
        w.g.send(
            reqwest::Method::PUT,
            "/api/v1/workspaces/default/delivery-policy",
            Some(policy.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{ws}");
    let (_, ws) = w.g.get("/api/v1/workspaces/default").await;
    assert_eq!(ws["deliveryPolicy"], policy, "{ws}");

    let (status, body) = w.g.post_empty(&format!("/api/v1/agents/{}/pause", w.agent)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut ids = Vec::new();
    for body in [
        json!({"message": "takes the default"}),
        json!({"message": "allowed mode", "mode": "immediate"}),
        json!({"message": "mode not allowed", "mode": "manual"}),
        json!({"message": "one too many", "mode": "immediate"}),
    ] {
        let (status, sent) = w.send(body).await;
        assert_eq!(status, StatusCode::OK, "{sent}");
        ids.push(sent["deliveryIds"][0].as_str().unwrap().to_string());
    }
    assert_eq!(w.delivery(&ids[0]).await["mode"], "on-idle");

    let (status, body) = w.g.post_empty(&format!("/api/v1/agents/{}/resume", w.agent)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    w.until_typed("allowed mode").await;
    for (id, says) in [
        (&ids[2], "delivery mode manual is not allowed in workspace default"),
        (&ids[3], "already has 2 deliveries waiting"),
    ] {
        let d = wait_for(|| async {
            let d = w.delivery(id).await;
            (d["status"] == "failed").then_some(d)
        })
        .await;
        let reason = d["reason"].as_str().unwrap();
        assert!(reason.starts_with("workspace policy: ") && reason.contains(says), "{d}");
    }
    let typed = std::fs::read_to_string(&w.surfaced).unwrap();
    assert!(typed.contains("takes the default"), "{typed}");
    assert!(
        !typed.contains("mode not allowed") && !typed.contains("one too many"),
        "{typed}"
    );
}

#[tokio::test]
async fn cancelling_a_delivery_the_harness_holds_drops_it_there() {
    let w = world().await;
    // Taken by the harness and held for the agent's next message.
    let (status, sent) = w
        .send(json!({"message": "held then cancelled", "mode": "next-message"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    let id = sent["deliveryIds"][0].as_str().unwrap().to_string();
    wait_for(|| async { (w.delivery(&id).await["status"] == "accepted").then_some(()) }).await;
    let (status, d) =
        w.g.post(
            &format!("/api/v1/deliveries/{id}/cancel"),
            json!({"reason": "changed my mind"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["status"], "cancelled", "{d}");

    // The next message is the boundary the held one waited for: only the new one goes in.
    let (status, sent) = w.send(json!({"message": "sent after the cancel"})).await;
    assert_eq!(status, StatusCode::OK, "{sent}");
    w.until_typed("sent after the cancel").await;
    let typed = std::fs::read_to_string(&w.surfaced).unwrap();
    assert!(
        !typed.contains("held then cancelled"),
        "the harness dropped it: {typed}"
    );
}

/// seed 002 turn lifecycle: a turn starts with its first message and completes once every
/// message of it was delivered and the agent went idle after it; the next message, sent after
/// that, opens a turn of its own. Each event comes once, in order, in the event log.
#[tokio::test]
async fn each_message_of_a_conversation_ends_its_own_turn_with_the_seed_002_events_once_in_order() {
    let w = world().await;
    // The task is the first message; two more, each once the agent answered the one before.
    w.until_said("Received: hello", 1).await;
    w.until_no_turn_runs().await;
    let mut sent = Vec::new();
    for text in ["second question", "third question"] {
        let (status, s) = w.send(json!({"message": text, "mode": "on-idle"})).await;
        assert_eq!(status, StatusCode::OK, "{s}");
        w.until_said(&format!("Received: {text}"), 1).await;
        w.until_no_turn_runs().await;
        sent.push(s);
    }

    let turns = w.turns().await;
    assert_eq!(turns.len(), 3, "one turn per message: {turns:?}");
    for (n, t) in turns.iter().enumerate() {
        assert_eq!(t["turnNumber"], n as i64 + 1, "{t}");
        assert_eq!(t["status"], "completed", "{t}");
        assert!(t["completedAt"].is_i64(), "{t}");
    }
    // The conversation as stored (REST has no reader of it; NATS session.messages is).
    let messages = relay_testkit::call_json(&w.m.client, "session.messages", json!({"sessionId": w.session}))
        .await
        .unwrap();
    let users: Vec<&Value> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 3, "{messages}");
    for (m, t) in users.iter().zip(&turns) {
        assert_eq!(m["turnId"], t["turnId"], "each message its own turn: {m}");
    }
    for (s, m) in sent.iter().zip(&users[1..]) {
        assert_eq!(s["turnId"], m["turnId"], "the send answered the message's turn: {s}");
    }
    let deliveries = w.deliveries().await;
    assert_eq!(deliveries.len(), 3, "{deliveries:?}");
    assert!(deliveries.iter().all(|d| d["status"] == "delivered"), "{deliveries:?}");

    // The log holds each message's seed 002 sequence once, turn after turn.
    let mut expected = Vec::new();
    for (m, t) in users.iter().zip(&turns) {
        let (m, t) = (m["messageId"].clone(), t["turnId"].clone());
        expected.extend([
            ("session.turn.started", t.clone(), m.clone()),
            ("session.user_message.sent", t.clone(), m.clone()),
            ("session.user_message.acknowledged", t.clone(), m.clone()),
            ("session.user_message.completed", t.clone(), m.clone()),
            ("session.turn.completed", t.clone(), Value::Null),
        ]);
    }
    let kinds = "session.turn.started,session.user_message.sent,session.user_message.acknowledged,\
                 session.user_message.completed,session.turn.completed";
    let logged = wait_for(|| async {
        let e = w.events(kinds).await;
        (e.len() >= expected.len()).then_some(e)
    })
    .await;
    let seen: Vec<(&str, Value, Value)> = logged
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["payload"]["turnId"].clone(),
                e["payload"]["messageId"].clone(),
            )
        })
        .collect();
    assert_eq!(seen, expected, "{logged:#?}");
    for e in &logged {
        let p = &e["payload"];
        match e["type"].as_str().unwrap() {
            "session.user_message.acknowledged" => assert_eq!(p["agentId"], json!(w.agent), "{e}"),
            "session.user_message.completed" => assert_eq!(p["outcome"], "completed", "{e}"),
            "session.turn.completed" => assert_eq!(p["success"], true, "{e}"),
            _ => {}
        }
    }
}

/// `onBusy: rollback` supersedes the running turn's messages, and what of them the runner has
/// not delivered yet is cancelled there: it never reaches the agent.
#[tokio::test]
async fn a_rollback_cancels_the_deliveries_of_the_messages_it_supersedes() {
    let w = world().await;
    w.give_work().await;
    let (status, queued) = w.send(json!({"message": "QUEUED note", "mode": "on-idle"})).await;
    assert_eq!(status, StatusCode::OK, "{queued}");
    let queued_delivery = queued["deliveryIds"][0].as_str().unwrap().to_string();
    let (status, instead) = w.send(json!({"message": "ROLLBACK note", "onBusy": "rollback"})).await;
    assert_eq!(status, StatusCode::OK, "{instead}");
    w.until_said(INTERRUPTED, 1).await;
    w.until_said("Received: ROLLBACK note", 1).await;

    let superseded = wait_for(|| async {
        w.deliveries().await.into_iter().find(|d| {
            d["deliveryId"] == queued_delivery.as_str()
                && ["delivered", "failed", "cancelled"].contains(&d["status"].as_str().unwrap_or_default())
        })
    })
    .await;
    assert_eq!(superseded["status"], "cancelled", "{superseded}");
    assert!(
        superseded["reason"]
            .as_str()
            .unwrap()
            .contains(instead["messageId"].as_str().unwrap()),
        "the reason names the message that superseded it: {superseded}"
    );
    let done = wait_for(|| async {
        w.events("session.user_message.completed")
            .await
            .into_iter()
            .find(|e| e["payload"]["messageId"] == queued["messageId"])
    })
    .await;
    assert_eq!(done["payload"]["outcome"], "superseded", "{done}");
    assert_eq!(done["payload"]["supersededBy"], instead["messageId"], "{done}");
    // The agent is idle after the rollback note: the queued note would have gone by now.
    wait_for(|| async { (w.busy().await == Some(false)).then_some(()) }).await;
    w.until_typed("ROLLBACK note").await;
    let typed = std::fs::read_to_string(&w.surfaced).unwrap();
    assert!(!typed.contains("QUEUED note"), "never typed: {typed}");
}
