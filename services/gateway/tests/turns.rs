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

    /// Once the agent is idle, gives it a minute of work and waits until it is busy with it.
    async fn make_busy(&self) {
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

    // rollback: as interrupt, and the cancelled turn's messages are superseded by the new one.
    w.make_busy().await;
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
        (done.len() == 2).then_some(done)
    })
    .await;
    for e in &superseded {
        assert_eq!(e["payload"]["supersededBy"], instead["messageId"], "{e}");
        assert_eq!(
            e["payload"]["turnId"], sent["turnId"],
            "the interrupting message's turn: {e}"
        );
    }
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
