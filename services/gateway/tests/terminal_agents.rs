//! Line-oriented terminal agents (aider, goose: the generic patterns) over the real mesh: the
//! fake agent in its generic style under a PTY harness started by the agent-spawner, people
//! through the gateway. What the agent got is what it was typed (its `--log`).

mod common;
use common::{Bearer, gateway, mesh};
use relay_testkit::{ServiceProcess, wait_for, wait_for_within};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

const ROOT: &str = "terminal-agents-root-token";

struct World {
    _m: common::Mesh,
    _g: common::Gateway,
    root: Bearer,
    log: PathBuf,
    session: String,
    _spawner: ServiceProcess,
}

/// The mesh, the gateway and one generic-style fake agent `@aider`, logging what it is typed.
async fn world() -> World {
    let m = mesh().await;
    let g = gateway(&m, &[("RELAY_API_TOKEN", ROOT)]).await;
    let root = Bearer::new(&g, ROOT);
    let dir = std::env::temp_dir().join(format!("relay-terminal-agents-{}", common::free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    let fake = relay_testkit::bin_path("fake-agent");
    let log = dir.join("aider.log");
    std::fs::write(&log, "").unwrap();
    let config = format!(
        "[spawner.agents.aider]\ncommand = [{fake:?}, \"--style\", \"generic\", \"--log\", {:?}]\npatterns = \"generic\"\n",
        log.to_str().unwrap()
    );
    let config_path = dir.join("spawner.toml");
    std::fs::write(&config_path, config).unwrap();
    let spawner = ServiceProcess::spawn(
        &relay_testkit::bin_path("agent-spawner"),
        &m.nats,
        &m.db,
        &[("RELAY_CONFIG", config_path.to_str().unwrap())],
    );
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    let (status, created) = root
        .post("/api/v1/sessions", json!({"cli": "aider", "agent": "aider"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let w = World {
        _m: m,
        _g: g,
        root,
        log,
        session: created["sessionId"].as_str().unwrap().to_string(),
        _spawner: spawner,
    };
    w.wait_status("idle").await;
    w
}

impl World {
    /// The messages the agent was typed so far, one per entry.
    fn surfaced(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    async fn events(&self, types: &str) -> Vec<Value> {
        let path = format!("/api/v1/events?sessionId={}&types={types}", self.session);
        let (status, page) = self.root.get(&path).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        page["events"].as_array().unwrap().clone()
    }

    /// The agent's last `status.changed`, from the event log.
    async fn status(&self) -> Option<String> {
        let changed = self.events("status.changed").await;
        changed.last()?["payload"]["status"].as_str().map(String::from)
    }

    async fn wait_status(&self, want: &str) {
        wait_for_within(Duration::from_secs(60), || async {
            (self.status().await.as_deref() == Some(want)).then_some(())
        })
        .await
    }

    async fn delivery_status(&self, id: &str) -> String {
        let (_, d) = self.root.get(&format!("/api/v1/deliveries/{id}")).await;
        d["status"].as_str().unwrap_or_default().to_string()
    }

    /// Waits until the delivery is `delivered` (failing at once if it failed).
    async fn wait_delivered(&self, id: &str) {
        wait_for_within(Duration::from_secs(60), || async {
            let status = self.delivery_status(id).await;
            assert_ne!(status, "failed", "delivery {id} failed");
            (status == "delivered").then_some(())
        })
        .await
    }

    /// A session message (no relay footer); its delivery id.
    async fn tell(&self, text: &str) -> String {
        let path = format!("/api/v1/sessions/{}/messages", self.session);
        let (status, sent) = self.root.post(&path, json!({"message": text})).await;
        assert_eq!(status, StatusCode::OK, "{sent}");
        sent["deliveryIds"][0].as_str().unwrap().to_string()
    }

    /// The pending questions of every agent.
    async fn questions(&self) -> Vec<Value> {
        let (status, page) = self.root.get("/api/v1/questions").await;
        assert_eq!(status, StatusCode::OK, "{page}");
        page["questions"].as_array().cloned().unwrap_or_default()
    }
}

/// A relay DM ends with its footer (`[relay dm from … · answer with relay_reply]`); typed on a
/// line-oriented CLI's one input line and echoed, "is it green? [relay …]" looks like the
/// generic "question? [options]" menu. It is the harness's own input: the DM is submitted once,
/// no question is asked of anyone, and the agent goes back to idle.
#[tokio::test]
async fn a_dm_with_a_question_mark_to_a_generic_agent_is_typed_once_and_leaves_it_idle() {
    let w = world().await;
    let (status, sent) = w
        .root
        .post(
            "/api/v1/messages",
            json!({"to": "@aider", "text": "is the build green?"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{sent}");
    let delivery = sent["recipients"][0]["deliveryId"]
        .as_str()
        .or_else(|| sent["deliveryIds"][0].as_str())
        .map(String::from);
    wait_for(|| async {
        w.surfaced()
            .iter()
            .any(|l| l.contains("is the build green?"))
            .then_some(())
    })
    .await;
    if let Some(id) = delivery {
        w.wait_delivered(&id).await;
    }
    w.wait_status("idle").await;
    let typed: Vec<_> = w
        .surfaced()
        .into_iter()
        .filter(|l| l.contains("is the build green?"))
        .collect();
    assert_eq!(typed.len(), 1, "typed once: {typed:?}");
    assert!(typed[0].contains("[relay dm from"), "with its footer: {typed:?}");
    assert_eq!(w.questions().await, Vec::<Value>::new(), "no question was asked");
    assert_eq!(
        w.events("question.requested,question.asked").await,
        Vec::<Value>::new(),
        "no question in the log"
    );
    // Still taking messages: the next one goes in at once.
    let next = w.tell("and the tests?").await;
    w.wait_delivered(&next).await;
    wait_for(|| async { w.surfaced().iter().any(|l| l == "and the tests?").then_some(()) }).await;
}

/// A line-oriented CLI that works for a while shows no prompt meanwhile: the Enter that
/// submitted the command must not be pressed again (each extra Enter is an empty line to the CLI
/// and a bare prompt row left on the screen), and the next message is typed once and submitted.
#[tokio::test]
async fn a_message_after_a_quiet_spell_is_typed_once_and_submitted() {
    let w = world().await;
    let sleep = w.tell("sleep 3000").await;
    w.wait_delivered(&sleep).await;
    // Working, then back at the prompt.
    wait_for_within(Duration::from_secs(30), || async {
        let changed = w.events("status.changed").await;
        let statuses: Vec<_> = changed.iter().filter_map(|e| e["payload"]["status"].as_str()).collect();
        (statuses.ends_with(&["active", "idle"]) && statuses.len() >= 3).then_some(())
    })
    .await;
    let hello = w.tell("hello after the quiet spell").await;
    w.wait_delivered(&hello).await;
    wait_for(|| async {
        w.surfaced()
            .iter()
            .any(|l| l.contains("hello after the quiet spell"))
            .then_some(())
    })
    .await;
    w.wait_status("idle").await;
    assert_eq!(
        w.surfaced(),
        ["hello after the quiet spell"],
        "the message typed once and submitted alone (the sleep is a command, not a message)"
    );
}
