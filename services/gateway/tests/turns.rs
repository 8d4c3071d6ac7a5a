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
