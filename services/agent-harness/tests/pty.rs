//! The whole delivery path with a real agent process: registry, event log, delivery runner and
//! the agent harness running the fake agent CLI under a PTY, all over a private NATS and a
//! fresh database. What the agent surfaced is read from the fake agent's own log file.

use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

const HARNESS: &str = env!("CARGO_BIN_EXE_agent-harness");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
    harness: ServiceProcess,
    agent: String,
    surfaced: PathBuf,
}

async fn mesh(session: &str) -> Mesh {
    mesh_styled(session, "claude").await
}

/// The mesh with the fake agent in `style` (claude, codex, gemini or generic), read with the
/// builtin patterns of that name.
async fn mesh_styled(session: &str, style: &str) -> Mesh {
    mesh_with(session, style, &[]).await
}

/// The mesh with the fake agent in `style`, started with `fake_args` too.
async fn mesh_with(session: &str, style: &str, fake_args: &[&str]) -> Mesh {
    let m = Cluster::start(&relay_testkit::bin_path("delivery-runner"), "delivery-runner", 1, &[]).await;
    let services = vec![
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("permission-manager"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest", "permission-manager"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    let surfaced = std::env::temp_dir().join(format!("fake-agent-{}.log", uuid::Uuid::new_v4().simple()));
    let mut args = vec![
        "--session",
        session,
        "--cli",
        style,
        "--",
        FAKE,
        "--style",
        style,
        "--log",
        surfaced.to_str().unwrap(),
    ];
    args.extend(fake_args);
    let harness = ServiceProcess::spawn_with_args(HARNESS, &args, &m.nats, &m.db, &[]);
    let agent = wait_for(|| async {
        let s = m.call("session.get", json!({"sessionId": session})).await.ok()?;
        s["session"]["agents"][0]["agentId"].as_str().map(String::from)
    })
    .await;
    // Ready once the fake agent showed its prompt and the runner learned it is idle.
    let pool = m.db.pool().await;
    wait_for(|| async { (runner_sees(&pool, &agent).await.as_deref() == Some("idle")).then_some(()) }).await;
    Mesh {
        m,
        _services: services,
        harness,
        agent,
        surfaced,
    }
}

/// The agent status the delivery runner learned from the event log.
async fn runner_sees(pool: &sqlx::PgPool, agent: &str) -> Option<String> {
    let status: Option<Option<String>> = sqlx::query_scalar("SELECT status FROM delivery_agents WHERE agent_id = $1")
        .bind(agent)
        .fetch_optional(pool)
        .await
        .ok()?;
    status.flatten()
}

impl Mesh {
    /// Lines the agent surfaced as user messages, in order.
    fn surfaced(&self) -> Vec<String> {
        std::fs::read_to_string(&self.surfaced)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    async fn wait_surfaced(&self, n: usize) -> Vec<String> {
        wait_for(|| async {
            let s = self.surfaced();
            (s.len() >= n).then_some(s)
        })
        .await
    }

    async fn send(&self, session: &str, text: &str, mode: &str) -> String {
        let sent = self
            .m
            .ok(
                "session.sendMessage",
                json!({"sessionId": session, "message": text, "delivery": {"mode": mode}}),
            )
            .await;
        sent["deliveryIds"][0].as_str().unwrap().to_string()
    }

    async fn status(&self, id: &str) -> String {
        self.m.ok("delivery.get", json!({"deliveryId": id})).await["status"]
            .as_str()
            .unwrap()
            .to_string()
    }

    async fn wait_status(&self, id: &str, want: &str) {
        wait_for(|| async { (self.status(id).await == want).then_some(()) }).await
    }

    /// Events of `types` in the session, from the durable log.
    async fn events(&self, session: &str, types: &[&str]) -> Vec<Value> {
        self.m
            .ok("event.query", json!({"types": types, "sessionIds": [session]}))
            .await["events"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// At least `n` events of these types, once they have all reached the log: the harness's
    /// own events and those other services forward through their outboxes arrive independently.
    async fn wait_events(&self, session: &str, types: &[&str], n: usize) -> Vec<Value> {
        wait_for(|| async {
            let e = self.events(session, types).await;
            (e.len() >= n).then_some(e)
        })
        .await
    }

    /// The agent's one pending permission request, once the manager has it.
    async fn pending_permission(&self) -> Value {
        wait_for(|| async {
            let l = self.m.ok("permission.list", json!({"agentId": self.agent})).await;
            l["permissions"].as_array().unwrap().first().cloned()
        })
        .await
    }

    async fn wait_output(&self, session: &str, needle: &str) {
        wait_for(|| async {
            let lines = self.events(session, &["terminal.output"]).await;
            lines
                .iter()
                .any(|e| e["payload"]["text"].as_str().unwrap_or("").contains(needle))
                .then_some(())
        })
        .await
    }
}

#[tokio::test]
async fn immediate_messages_reach_the_agent_process_in_order_and_are_delivered() {
    let h = mesh("imm").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(h.send("imm", &format!("hello {i}"), "immediate").await);
    }
    for id in &ids {
        h.wait_status(id, "delivered").await;
    }
    assert_eq!(
        h.wait_surfaced(5).await,
        ["hello 0", "hello 1", "hello 2", "hello 3", "hello 4"]
    );
    // Events reach the log shortly after the receipts: wait for five, then check none more came.
    h.wait_events("imm", &["message.received"], 5).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let received = h.events("imm", &["message.received"]).await;
    assert_eq!(received.len(), 5, "one message.received per delivery");
}

#[tokio::test]
async fn manual_messages_wait_for_flush() {
    let h = mesh("man").await;
    let id = h.send("man", "when you are ready", "manual").await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(h.surfaced().is_empty());
    assert_eq!(h.status(&id).await, "pending");
    h.m.ok("delivery.flush", json!({"agentId": h.agent})).await;
    h.wait_status(&id, "delivered").await;
    assert_eq!(h.wait_surfaced(1).await, ["when you are ready"]);
}

/// The harness declared `delivery.queue`: it accepts a next-tool-call message, holds it, types
/// it when the agent's next tool call shows on the terminal, and reports it delivered.
#[tokio::test]
async fn next_tool_call_messages_are_typed_at_the_agents_next_tool_call() {
    let h = mesh("ntc").await;
    let id = h.send("ntc", "coordinate before acting", "next-tool-call").await;
    h.wait_status(&id, "accepted").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(h.surfaced().is_empty(), "held until a tool call");
    h.send("ntc", "tool Bash ls -la", "immediate").await;
    h.wait_status(&id, "delivered").await;
    assert_eq!(h.wait_surfaced(1).await, ["coordinate before acting"]);
    let called = h.wait_events("ntc", &["tool.called"], 1).await;
    assert_eq!(called[0]["payload"]["tool"], "Bash");
}

#[tokio::test]
async fn next_message_messages_ride_ahead_of_the_next_message() {
    let h = mesh("nm").await;
    let early = h.send("nm", "fyi: build is green", "next-message").await;
    h.wait_status(&early, "accepted").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(h.surfaced().is_empty());
    let later = h.send("nm", "please deploy", "immediate").await;
    h.wait_status(&later, "delivered").await;
    h.wait_status(&early, "delivered").await;
    assert_eq!(h.wait_surfaced(2).await, ["fyi: build is green", "please deploy"]);
}

/// on-idle waits while the agent works (status learned from its status events) and goes out
/// when it shows its prompt again.
#[tokio::test]
async fn on_idle_messages_wait_until_the_agent_is_idle() {
    let h = mesh("idle").await;
    h.send("idle", "sleep 1500", "immediate").await;
    // The runner sees the agent active before the on-idle message is sent.
    let pool = h.m.db.pool().await;
    wait_for(|| async { (runner_sees(&pool, &h.agent).await.as_deref() == Some("active")).then_some(()) }).await;
    let id = h.send("idle", "when you have a moment", "on-idle").await;
    h.wait_status(&id, "delivered").await;
    assert_eq!(h.wait_surfaced(1).await, ["when you have a moment"]);
    // Causal order, not timing: the agent went active (the sleep), idle again, and only then
    // was the message delivered. The harness's status events and the runner's delivery.delivered
    // reach the log by different paths, so wait for all three and compare their timestamps.
    let marks: Vec<(i64, String)> = wait_for(|| async {
        let events = h.events("idle", &["status.changed", "delivery.delivered"]).await;
        let marks: Vec<(i64, String)> = events
            .iter()
            .filter_map(|e| {
                let mark = match e["type"].as_str() {
                    Some("status.changed") => e["payload"]["status"].as_str().map(String::from),
                    _ if e["payload"]["deliveryId"] == json!(id) => Some("delivered".into()),
                    _ => None,
                };
                Some((e["ts"].as_i64()?, mark?))
            })
            .collect();
        let active = marks.iter().find(|m| m.1 == "active")?.0;
        let idle_again = marks.iter().any(|m| m.1 == "idle" && m.0 >= active);
        (idle_again && marks.iter().any(|m| m.1 == "delivered")).then_some(marks)
    })
    .await;
    let at = |mark: &str| marks.iter().find(|m| m.1 == mark).unwrap().0;
    let (active, delivered) = (at("active"), at("delivered"));
    assert!(
        marks
            .iter()
            .any(|(ts, m)| m == "idle" && (active..=delivered).contains(ts)),
        "delivered while busy: {marks:?}"
    );
}

#[tokio::test]
async fn pause_holds_deliveries_and_resume_sends_them_in_order() {
    let h = mesh("pause").await;
    let hold = h.m.ok("agent.pause", json!({"agentId": h.agent})).await;
    assert_eq!(hold["paused"], true);
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(h.send("pause", &format!("queued {i}"), "immediate").await);
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(h.surfaced().is_empty(), "nothing while paused");
    let resumed = h.m.ok("agent.resume", json!({"agentId": h.agent})).await;
    assert_eq!(resumed["waiting"], 4);
    for id in &ids {
        h.wait_status(id, "delivered").await;
    }
    assert_eq!(
        h.wait_surfaced(4).await,
        ["queued 0", "queued 1", "queued 2", "queued 3"]
    );
    h.m.err("agent.pause", json!({"agentId": "ghost"}), "not_found").await;
}

/// A runner retrying the same delivery id (as after a crash) reaches the agent once.
#[tokio::test]
async fn a_delivery_id_seen_twice_is_acknowledged_but_surfaced_once() {
    let h = mesh("dup").await;
    let id = h.send("dup", "exactly once", "immediate").await;
    h.wait_status(&id, "delivered").await;
    assert_eq!(h.wait_surfaced(1).await, ["exactly once"]);
    let d = h.m.ok("delivery.get", json!({"deliveryId": id})).await;
    let message = h.m.ok("session.messages", json!({"sessionId": "dup"})).await["messages"][0].clone();
    let again = json!({"context": {"id": id, "mode": "immediate", "reason": "message"}, "message": message});
    let subject = format!("agent.{}.deliver", h.agent);
    for _ in 0..2 {
        let receipt = h.m.ok(&subject, again.clone()).await;
        assert_eq!(receipt["status"], "delivered");
        assert_eq!(receipt["deliveryId"], d["deliveryId"]);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(h.surfaced(), ["exactly once"]);
}

/// A permission menu goes to the real permission manager: a safe command is approved by
/// policy at once; a destructive one waits pending until a human approves it; another waits
/// until denied. Each decision reaches the agent's menu as the keys that menu takes, in each
/// CLI's style (a denial is Esc, which never selects an approving option).
#[tokio::test]
async fn permission_menus_are_decided_by_policy_or_a_human_and_answered_with_the_menus_keys() {
    for style in ["claude", "codex", "gemini", "generic"] {
        permission_menus_in_style(style).await;
    }
}

async fn permission_menus_in_style(style: &str) {
    eprintln!("permission menus, {style} style");
    let h = mesh_styled("perm", style).await;
    h.send("perm", "ask-permission Bash git status", "immediate").await;
    h.wait_output("perm", "Permission granted: Bash git status").await;

    h.send("perm", "ask-permission Bash rm -rf build", "immediate").await;
    let pending = h.pending_permission().await;
    assert_eq!(pending["tool"], "bash");
    assert_eq!(pending["command"], "rm -rf build");
    assert_eq!(pending["riskLevel"], "critical");
    let approved =
        h.m.ok(
            "permission.approve",
            json!({"requestId": pending["requestId"], "reason": "build dir only"}),
        )
        .await;
    assert_eq!(approved["harnessNotified"], true);
    h.wait_output("perm", "Permission granted: Bash rm -rf build").await;

    h.send("perm", "ask-permission Bash git push --force", "immediate")
        .await;
    let pending = h.pending_permission().await;
    assert_eq!(pending["riskLevel"], "medium");
    h.m.ok(
        "permission.deny",
        json!({"requestId": pending["requestId"], "reason": "not on main"}),
    )
    .await;
    h.wait_output("perm", "Permission denied: Bash git push --force").await;
    let resolved = h.wait_events("perm", &["permission.resolved"], 3).await;
    let decisions: Vec<&str> = resolved
        .iter()
        .map(|e| e["payload"]["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["approved", "approved", "denied"], "{style}");
}

/// A question menu, in each CLI's style: the options read off the screen, the human's answer
/// entered as that option's key.
#[tokio::test]
async fn questions_are_answered_by_a_human_and_entered_as_the_options_key() {
    for style in ["claude", "codex", "gemini", "generic"] {
        question_in_style(style).await;
    }
}

async fn question_in_style(style: &str) {
    let h = mesh_styled("q", style).await;
    h.send("q", "ask Which database should I use? postgres/mysql", "immediate")
        .await;
    let question = wait_for(|| async {
        let l = h.m.ok("question.list", json!({"agentId": h.agent})).await;
        l["questions"].as_array().unwrap().first().cloned()
    })
    .await;
    assert_eq!(question["question"], "Which database should I use?", "{style}");
    assert_eq!(question["options"], json!(["postgres", "mysql"]), "{style}");
    let answered =
        h.m.ok(
            "question.answer",
            json!({"questionId": question["questionId"], "answer": "postgres"}),
        )
        .await;
    assert_eq!(answered["harnessNotified"], true);
    h.wait_output("q", "Answer received: postgres").await;
}

/// Tool calls, file operations and commands on the screen become events; raw input reaches
/// the terminal.
#[tokio::test]
async fn agent_output_becomes_typed_events_and_input_reaches_the_terminal() {
    let h = mesh("out").await;
    h.send("out", "tool Grep TODO src", "immediate").await;
    h.send("out", "edit src/main.rs", "immediate").await;
    let input =
        h.m.ok("agent.input", json!({"agentId": h.agent, "data": "run cargo test\r"}))
            .await;
    assert_eq!(input["accepted"], true);
    // One command can yield several of these events, so wait for every kind, not a count.
    let wanted = ["tool.called", "item.started", "file.operation", "command.executed"];
    let found = wait_for(|| async {
        let e = h.events("out", &wanted).await;
        let kinds: std::collections::HashSet<String> =
            e.iter().map(|e| e["type"].as_str().unwrap().to_string()).collect();
        wanted.iter().all(|k| kinds.contains(*k)).then_some(e)
    })
    .await;
    assert!(
        found
            .iter()
            .any(|e| e["type"] == "tool.called" && e["payload"]["tool"] == "Grep"),
        "no tool.called for Grep in {found:?}"
    );
}

/// Token lines a CLI prints (aider-like, the generic patterns) become tokens.used events, which
/// the cost aggregator prices: the report for this agent matches the hand-computed cost.
#[tokio::test]
async fn token_lines_printed_by_the_agent_are_priced_by_the_cost_aggregator() {
    let h = mesh_styled("cost", "generic").await;
    let _costs = ServiceProcess::spawn(
        &relay_testkit::bin_path("cost-aggregator"),
        &h.m.nats,
        &h.m.db,
        &[("RELAY_COSTS__DEFAULT_MODEL", "claude-sonnet-4-5")],
    );
    relay_testkit::wait_for_instances(&h.m.client, "cost-aggregator", 1).await;
    h.send("cost", "tokens 1500 800", "immediate").await;
    h.send("cost", "tokens 120000 4000", "immediate").await;
    let report = wait_for(|| async {
        let r = h.m.ok("cost.report", json!({"agent": h.agent})).await;
        (r["total"]["events"] == 2).then_some(r)
    })
    .await;
    // 121,500 input × $3/M + 4,800 output × $15/M = $0.3645 + $0.072
    let usd = report["total"]["estimatedCostUsd"].as_f64().unwrap();
    assert!((usd - 0.4365).abs() < 1e-9, "{report:#}");
    assert_eq!(report["byModel"]["claude-sonnet-4-5"]["inputTokens"], 121_500);
    assert_eq!(report["bySession"]["cost"]["outputTokens"], 4_800);
}

#[tokio::test]
async fn stop_releases_the_agent_and_cancels_what_it_was_not_sent() {
    let mut h = mesh("stop").await;
    h.m.ok("agent.pause", json!({"agentId": h.agent})).await;
    let id = h.send("stop", "never surfaced", "immediate").await;
    let stopped =
        h.m.ok("agent.stop", json!({"agentId": h.agent, "reason": "done for today"}))
            .await;
    assert_eq!(stopped, json!({"released": true, "cancelled": 1}));
    assert_eq!(h.status(&id).await, "cancelled");
    let exited = h.harness.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(exited, Some(true), "the harness exits once released");
    let released = h.events("stop", &["session.released"]).await;
    assert_eq!(released.len(), 1);
    assert!(h.surfaced().is_empty());
}

/// SIGTERM (docker stop, a Kubernetes rollout) stops the agent and ends its agent session: the
/// harness exits cleanly, the registry no longer lists the agent as attached, and the log says
/// how the session ended.
#[tokio::test]
async fn sigterm_stops_the_agent_and_ends_its_agent_session() {
    let mut h = mesh("term").await;
    assert!(h.harness.terminate().await, "a clean exit on SIGTERM");
    let agents = h.m.ok("session.get", json!({"sessionId": "term"})).await["session"]["agents"].clone();
    assert_eq!(agents[0]["agentId"], h.agent.as_str());
    assert_eq!(agents[0]["status"], "disposed", "{agents}");
    let ended = h.events("term", &["session.ended"]).await;
    assert_eq!(ended.len(), 1, "{ended:?}");
    let offline = h.events("term", &["status.changed"]).await;
    assert_eq!(offline.last().unwrap()["payload"]["status"], "offline");
}

/// An agent that exits while the bus is gone leaves its harness retrying its last events; asked
/// to stop then, the harness still exits (after its grace period) instead of retrying forever.
#[tokio::test]
async fn a_harness_ending_without_a_bus_still_exits_when_asked_to_stop() {
    let mut h = mesh("nobus").await;
    h.m.ok("agent.input", json!({"agentId": h.agent, "data": "sleep 800\rexit\r"}))
        .await;
    h.m.nats.stop().await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        h.harness.wait_exit(Duration::from_millis(100)).await,
        None,
        "still retrying its events"
    );
    assert!(h.harness.terminate().await, "exits within the grace period");
}

/// Text typed while a y/n prompt shows would answer it: a message that arrives then waits
/// (accepted) and is typed once the decision is.
#[tokio::test]
async fn a_message_arriving_during_a_permission_prompt_waits_for_the_decision() {
    let h = mesh("hold").await;
    h.send("hold", "ask-permission Bash rm -rf build", "immediate").await;
    let pending = h.pending_permission().await;
    let id = h.send("hold", "meanwhile, a note", "immediate").await;
    h.wait_status(&id, "accepted").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(h.surfaced().is_empty(), "not typed into the prompt");
    h.m.ok("permission.approve", json!({"requestId": pending["requestId"]}))
        .await;
    h.wait_output("hold", "Permission granted: Bash rm -rf build").await;
    h.wait_status(&id, "delivered").await;
    assert_eq!(h.wait_surfaced(1).await, ["meanwhile, a note"]);
}

/// Nothing typed reaches a CLI while its permission menu shows. A message sent right behind the
/// command that opens the menu (the CLI has not drawn it yet when the message arrives), and one
/// sent while it shows, both wait; the human's deny is the only thing typed into the menu (the
/// fake reads an Esc with a paste right behind it as a Meta prefix, and Enter as the highlighted
/// "allow", as the real TUIs do); then each message is typed once and reported delivered only
/// then. The denied command never ran, and no `command.executed` says it did.
#[tokio::test]
async fn a_message_sent_while_a_permission_menu_is_open_waits_and_is_typed_once_after_the_deny_and_the_denied_command_never_ran()
 {
    for style in ["claude", "codex", "gemini", "generic"] {
        message_waits_for_the_deny_in_style(style).await;
    }
}

async fn message_waits_for_the_deny_in_style(style: &str) {
    eprintln!("a message waits for the deny, {style} style");
    let h = mesh_styled("deny", style).await;
    h.send("deny", "ask-permission Bash rm -rf build", "immediate").await;
    let behind = h.send("deny", "thanks, carry on", "immediate").await;
    let pending = h.pending_permission().await;
    let meanwhile = h.send("deny", "and one more note", "immediate").await;
    h.wait_status(&meanwhile, "accepted").await;
    h.wait_status(&behind, "accepted").await;
    // The person at the console cannot answer the menu by typing either.
    h.m.err("agent.input", json!({"agentId": h.agent, "data": "1"}), "conflict")
        .await;
    assert!(h.surfaced().is_empty(), "{style}: nothing typed into the menu");
    h.m.ok(
        "permission.deny",
        json!({"requestId": pending["requestId"], "reason": "not now"}),
    )
    .await;
    h.wait_output("deny", "Permission denied: Bash rm -rf build").await;
    h.wait_status(&behind, "delivered").await;
    h.wait_status(&meanwhile, "delivered").await;
    // Typed once each, in order, and the agent is idle again with nothing left to type.
    assert_eq!(
        h.wait_surfaced(2).await,
        ["thanks, carry on", "and one more note"],
        "{style}"
    );
    h.wait_output("deny", "Received: and one more note").await;
    let pool = h.m.db.pool().await;
    wait_for(|| async { (runner_sees(&pool, &h.agent).await.as_deref() == Some("idle")).then_some(()) }).await;
    assert_eq!(h.surfaced().len(), 2, "{style}: typed once");
    let outputs = h.events("deny", &["terminal.output"]).await;
    assert!(
        !outputs.iter().any(|e| e["payload"]["text"]
            .as_str()
            .unwrap_or("")
            .contains("Permission granted")),
        "{style}: the deny held"
    );
    assert!(
        h.events("deny", &["command.executed"]).await.is_empty(),
        "{style}: a denied command is never reported executed"
    );
}

/// Events follow the truth: an approved call is reported executed once it ran, after it was
/// called; a denied one is reported completed as denied, never executed.
#[tokio::test]
async fn a_command_is_reported_executed_only_once_it_ran_and_a_tool_is_called_before_it_completes() {
    for style in ["claude", "codex", "gemini"] {
        eprintln!("events follow the truth, {style} style");
        let h = mesh_styled("truth", style).await;
        h.send("truth", "ask-permission Bash git status", "immediate").await;
        h.wait_output("truth", "Permission granted: Bash git status").await;
        let executed = h.wait_events("truth", &["command.executed"], 1).await;
        assert_eq!(executed[0]["payload"]["command"], "git status", "{style}");
        let calls = h.wait_events("truth", &["tool.called", "tool.completed"], 2).await;
        let kinds: Vec<&str> = calls.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["tool.called", "tool.completed"], "{style}");

        h.send("truth", "ask-permission Bash git push --force", "immediate")
            .await;
        let pending = h.pending_permission().await;
        h.m.ok("permission.deny", json!({"requestId": pending["requestId"]}))
            .await;
        let calls = h.wait_events("truth", &["tool.completed"], 2).await;
        assert_eq!(calls[1]["payload"]["denied"], true, "{style}: {calls:?}");
        let executed = h.events("truth", &["command.executed"]).await;
        assert_eq!(
            executed.len(),
            1,
            "{style}: only the approved command ran: {executed:?}"
        );
    }
}

/// A CLI that runs a tool without asking (Claude Code's auto mode, which 2.1.332 starts in)
/// is never silent: `permission.bypassed`, the agent blocked, and what is sent to it afterwards
/// fails instead of reaching a CLI whose tools are out of control.
#[tokio::test]
async fn a_tool_run_with_no_permission_request_is_reported_bypassed_and_blocks_the_agent() {
    let h = mesh_with("bypass", "claude", &["--permission-mode", "auto"]).await;
    h.send("bypass", "ask-permission Bash touch x.txt", "immediate").await;
    let bypassed = h.wait_events("bypass", &["permission.bypassed"], 1).await;
    assert_eq!(bypassed[0]["payload"]["ran"], "touch x.txt", "{bypassed:?}");
    let pool = h.m.db.pool().await;
    wait_for(|| async { (runner_sees(&pool, &h.agent).await.as_deref() == Some("blocked")).then_some(()) }).await;
    let after = h.send("bypass", "keep going", "immediate").await;
    h.wait_status(&after, "failed").await;
    assert!(h.surfaced().is_empty());
    // It stays blocked: the turn's end does not make it idle.
    h.wait_output("bypass", "ran: touch x.txt").await;
    let statuses = h.events("bypass", &["status.changed"]).await;
    assert_eq!(statuses.last().unwrap()["payload"]["status"], "blocked", "{statuses:?}");
}

/// Releasing the agent ends the CLI's whole process tree: what it started and left running (a
/// relaunched node, its MCP servers, a tool's command), even one that ignores the hang-up.
#[tokio::test]
async fn stop_ends_the_clis_whole_process_tree_even_what_ignores_the_hang_up() {
    let mut h = mesh("tree").await;
    h.send("tree", "spawn nohup sleep 600", "immediate").await;
    let pid: u32 = wait_for(|| async {
        let lines = h.events("tree", &["terminal.output"]).await;
        lines.iter().find_map(|e| {
            let text = e["payload"]["text"].as_str()?;
            text.trim().strip_prefix("spawned ")?.trim().parse().ok()
        })
    })
    .await;
    assert!(running(pid), "the CLI's child runs");
    h.m.ok("agent.stop", json!({"agentId": h.agent})).await;
    assert_eq!(h.harness.wait_exit(Duration::from_secs(10)).await, Some(true));
    wait_for(|| async { (!running(pid)).then_some(()) }).await;
}

/// Whether `pid` is a live process (not gone, not a zombie waiting to be reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}
