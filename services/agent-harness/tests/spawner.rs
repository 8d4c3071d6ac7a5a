//! `agent-spawner` over the bus: each `agent.spawn` starts the fake agent CLI under its own
//! agent-harness process, attached to the session, with the task as its first message. Registry,
//! event log and delivery runner are real, on a private NATS and a fresh database.

use relay_testkit::{AsAgent, Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
    spawner: ServiceProcess,
    /// What the fake agent surfaced (its --log file).
    surfaced: PathBuf,
    _config: PathBuf,
}

/// A fresh path in the temp dir, `<stem>-<uuid>.<ext>` (the config loader goes by extension).
fn temp(stem: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{stem}-{}.{ext}", uuid::Uuid::new_v4().simple()))
}

/// The mesh plus one spawner allowed `max_agents`, whose `claude` is the fake agent.
async fn mesh(max_agents: usize) -> Mesh {
    let m = Cluster::start(&relay_testkit::bin_path("delivery-runner"), "delivery-runner", 1, &[]).await;
    let services = vec![
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    let surfaced = temp("spawned-agent", "log");
    let config = temp("spawner", "toml");
    let toml = format!(
        "[spawner]\nmax_agents = {max_agents}\nattach_timeout_ms = 20000\n\n[spawner.commands]\n\
         claude = [{fake:?}, \"--style\", \"claude\", \"--log\", {log:?}]\n\
         aider = [\"/nonexistent/aider\"]\n\n\
         [spawner.agents.lead]\ncommand = [{fake:?}, \"--style\", \"claude\"]\npatterns = \"claude\"\ndelegate = true\n\
         [spawner.agents.lead.capabilities.identity]\ndescription = \"splits work among workers\"\n",
        fake = FAKE,
        log = surfaced.to_str().unwrap(),
    );
    std::fs::write(&config, toml).unwrap();
    let spawner = ServiceProcess::spawn(SPAWNER, &m.nats, &m.db, &[("RELAY_CONFIG", config.to_str().unwrap())]);
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 1).await;
    Mesh {
        m,
        _services: services,
        spawner,
        surfaced,
        _config: config,
    }
}

impl Mesh {
    async fn session(&self) -> String {
        let r = self.m.ok("session.create", json!({})).await;
        r["sessionId"].as_str().unwrap().to_string()
    }

    async fn agents(&self, session: &str) -> Vec<Value> {
        let r = self.m.ok("session.get", json!({ "sessionId": session })).await;
        r["session"]["agents"].as_array().cloned().unwrap_or_default()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Processes whose command line mentions `needle` (Linux /proc).
fn processes_with(needle: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else { return 0 };
    dir.filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(needle))
        .count()
}

/// The spawner holds each harness's stdin, so however it ends (here SIGKILL, no shutdown hook)
/// its harnesses stop their agents and end their agent sessions in the registry on the way out.
#[tokio::test]
async fn killing_the_spawner_stops_its_harnesses_and_ends_their_agent_sessions() {
    let mut mesh = mesh(4).await;
    let session = mesh.session().await;
    for _ in 0..2 {
        mesh.m
            .ok("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
            .await;
    }
    // Each harness and each fake agent has the fake agent's log path on its command line.
    let log = mesh.surfaced.to_str().unwrap().to_string();
    assert_eq!(processes_with(&log), 4, "two harnesses, two agents");
    mesh.spawner.kill9().await;
    wait_for(|| async {
        let agents = mesh.agents(&session).await;
        agents.iter().all(|a| a["status"] == "disposed").then_some(())
    })
    .await;
    wait_for(|| async { (processes_with(&log) == 0).then_some(()) }).await;
}

#[tokio::test]
async fn spawn_starts_the_cli_under_a_harness_attached_to_the_session_and_delivers_the_task() {
    let mesh = mesh(4).await;
    let session = mesh.session().await;
    let spawned = mesh
        .m
        .ok(
            "agent.spawn",
            json!({"sessionId": session, "cli": "claude", "task": "refactor the parser"}),
        )
        .await;
    let agent_id = spawned["agentId"].as_str().unwrap().to_string();

    // Attached before the reply: the registry already lists it, with the harness's capabilities.
    let agents = mesh.agents(&session).await;
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["agentId"], agent_id.as_str());
    assert_eq!(agents[0]["adapterId"], "claude", "{}", agents[0]);
    assert!(agents[0]["capabilities"]["delivery"]["modes"].is_array());

    // The task is the agent's first message, typed into the fake CLI.
    wait_for(|| async { read(&mesh.surfaced).contains("refactor the parser").then_some(()) }).await;

    // agent.stop releases it through its harness, which then exits.
    mesh.m
        .ok("agent.stop", json!({ "agentId": agent_id, "reason": "test over" }))
        .await;
    wait_for(|| async {
        let agents = mesh.agents(&session).await;
        (agents[0]["status"] == "disposed").then_some(())
    })
    .await;
}

#[tokio::test]
async fn spawn_refuses_unknown_clis_bad_cwds_missing_commands_and_more_agents_than_allowed() {
    let mesh = mesh(1).await;
    let session = mesh.session().await;

    let unknown = mesh
        .m
        .err("agent.spawn", json!({"sessionId": session, "cli": "nano"}), "not_found")
        .await;
    assert!(unknown.error.message.contains("claude"), "{unknown:?}");
    mesh.m
        .err(
            "agent.spawn",
            json!({"sessionId": session, "cli": "claude", "cwd": "/no/such/dir"}),
            "invalid_request",
        )
        .await;
    // A configured command that does not exist here is not offered: no host runs it.
    let missing = mesh
        .m
        .err(
            "agent.spawn",
            json!({"sessionId": session, "cli": "aider"}),
            "not_found",
        )
        .await;
    assert!(missing.error.message.contains("\"aider\" on any host"), "{missing:?}");
    assert!(
        mesh.agents(&session).await.is_empty(),
        "a failed spawn attaches nothing"
    );

    // One slot: a second agent waits for the first to end.
    let first = mesh
        .m
        .ok("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
        .await;
    let busy = mesh
        .m
        .err(
            "agent.spawn",
            json!({"sessionId": session, "cli": "claude"}),
            "unavailable",
        )
        .await;
    assert!(busy.error.message.contains("maximum"), "{busy:?}");
    mesh.m.ok("agent.stop", json!({ "agentId": first["agentId"] })).await;
    let second = wait_for(|| async {
        mesh.m
            .call("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
            .await
            .ok()
    })
    .await;
    assert_ne!(second["agentId"], first["agentId"]);
}

/// A harness acts for its agent only as far as that agent may go: one that does not delegate
/// cannot spawn (each declares what its path supports, seed 004); a lead (its spawner entry says `delegate`, so it declares AG-UI
/// `multiAgent.delegation`) spawns workers into its own session only, they are `spawnedBy` it,
/// and it stops them but no other agent; it reads only its own session's events.
#[tokio::test]
async fn a_lead_spawns_and_stops_only_its_own_workers_and_reads_only_its_own_session() {
    let mesh = mesh(4).await;
    let session = mesh.session().await;
    let elsewhere = mesh.session().await;
    let spawn = |cli: &'static str| {
        let m = &mesh.m;
        let session = session.clone();
        async move {
            let r = m.ok("agent.spawn", json!({"sessionId": session, "cli": cli})).await;
            r["agentId"].as_str().unwrap().to_string()
        }
    };
    let plain = spawn("claude").await;
    let lead = spawn("lead").await;
    let caps = mesh.m.ok("agent.get", json!({ "agent": lead })).await;
    assert_eq!(caps["agentCapabilities"]["multiAgent"]["delegation"], true, "{caps}");
    // Derived from its path (the fake agent read as Claude Code on a PTY), plus its entry's own.
    let agui = &caps["agentCapabilities"];
    assert_eq!(agui["identity"]["description"], "splits work among workers", "{caps}");
    assert_eq!(agui["identity"]["provider"], "Anthropic", "{caps}");
    assert_eq!(agui["humanInTheLoop"]["approvals"], true, "{caps}");
    assert_eq!(agui["custom"]["relayMesh"]["terminal"], true, "{caps}");
    let plain_caps = mesh.m.ok("agent.get", json!({ "agent": plain })).await;
    assert_eq!(
        plain_caps["agentCapabilities"]["multiAgent"]["delegation"], false,
        "{plain_caps}"
    );
    assert_eq!(
        plain_caps["agentCapabilities"]["tools"]["supported"], true,
        "{plain_caps}"
    );

    let as_plain = AsAgent::connect(&mesh.m.nats, &plain).await;
    let refused = as_plain
        .forbidden("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
        .await;
    assert!(refused.contains("multiAgent.delegation"), "{refused}");

    let as_lead = AsAgent::connect(&mesh.m.nats, &lead).await;
    let refused = as_lead
        .forbidden("agent.spawn", json!({"sessionId": elsewhere, "cli": "claude"}))
        .await;
    assert!(refused.contains("own session"), "{refused}");
    let worker = as_lead
        .ok("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
        .await;
    let worker = worker["agentId"].as_str().unwrap().to_string();
    let got = mesh.m.ok("agent.get", json!({ "agent": worker })).await;
    assert_eq!(got["spawnedBy"], lead.as_str(), "{got}");
    assert_eq!(got["sessionId"], session.as_str(), "{got}");

    // Its own session's events, and no one else's. The worker's first events reach the log
    // a moment after the spawn's reply, so the lead reads until they are there.
    wait_for(|| async {
        let page = as_lead
            .ok("event.since", json!({"seq": 0, "sessionIds": [session]}))
            .await;
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["agentId"] == worker.as_str())
            .then_some(())
    })
    .await;
    as_lead
        .forbidden("event.since", json!({"seq": 0, "sessionIds": [elsewhere]}))
        .await;
    as_lead.forbidden("event.since", json!({"seq": 0})).await;

    // It stops its worker, not an agent it did not start.
    let refused = as_lead.forbidden("agent.stop", json!({ "agentId": plain })).await;
    assert!(refused.contains("spawned"), "{refused}");
    as_plain.forbidden("agent.stop", json!({ "agentId": worker })).await;
    as_lead
        .ok("agent.stop", json!({ "agentId": worker, "reason": "done" }))
        .await;
    wait_for(|| async {
        let agents = mesh.agents(&session).await;
        agents
            .iter()
            .any(|a| a["agentId"] == worker.as_str() && a["status"] == "disposed")
            .then_some(())
    })
    .await;
    let still = mesh.m.ok("agent.get", json!({ "agent": plain })).await;
    assert_ne!(still["status"], "disposed", "{still}");
}
