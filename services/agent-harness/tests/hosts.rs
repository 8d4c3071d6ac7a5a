//! Agents placed across hosts: two agent-spawners, each registering its own host (labels,
//! capacity, load) with the registry and heartbeating. `agent.spawn` goes to whichever spawner
//! takes it, which has the registry place it; a host that stops heartbeating has its agents
//! offline (deliveries held), then lost (ended, their waiting deliveries failed naming it; or
//! re-homed onto the other host, their deliveries following).
//! Registry, event log and delivery runner are real, on a private NATS (auth on) and a fresh
//! database.

use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::PathBuf;

const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
    spawners: Vec<ServiceProcess>,
    _configs: Vec<PathBuf>,
}

/// Hosts `alpha` (zone a; runs claude) and `beta` (zone b, gpu a100; runs claude and codex),
/// two agents each, heartbeating every 200 ms; a host is offline after 1.5 s without one and
/// lost 6 s later, when `on_lost` applies to its agents.
async fn mesh(on_lost: &str) -> Mesh {
    // A delivery attempt to a harness that does not answer times out after 500 ms: a held
    // delivery shows as one attempt where an attempted one would show several.
    let runner_env = [("RELAY_RUNNER__DELIVER_TIMEOUT_MS", "500")];
    let m = Cluster::start(
        &relay_testkit::bin_path("delivery-runner"),
        "delivery-runner",
        1,
        &runner_env,
    )
    .await;
    let registry_env = [
        ("RELAY_REGISTRY__HOSTS__OFFLINE_AFTER_MS", "1500"),
        ("RELAY_REGISTRY__HOSTS__LOST_AFTER_MS", "6000"),
        ("RELAY_REGISTRY__HOSTS__ON_LOST", on_lost),
    ];
    let services = vec![
        ServiceProcess::spawn(
            &relay_testkit::bin_path("session-registry"),
            &m.nats,
            &m.db,
            &registry_env,
        ),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    let (mut spawners, mut configs) = (Vec::new(), Vec::new());
    for (host, labels, clis) in [
        ("alpha", r#"zone = "a""#, vec!["claude"]),
        ("beta", "zone = \"b\"\ngpu = \"a100\"", vec!["claude", "codex"]),
    ] {
        let commands: String = clis
            .iter()
            .map(|c| format!("{c} = [{FAKE:?}, \"--style\", \"claude\"]\n"))
            .collect();
        let toml = format!(
            "[spawner]\nhost_id = \"{host}\"\nmax_agents = 2\nheartbeat_ms = 200\nattach_timeout_ms = 20000\n\n\
             [spawner.labels]\n{labels}\n\n[spawner.commands]\n{commands}"
        );
        let config = std::env::temp_dir().join(format!("spawner-{host}-{}.toml", uuid::Uuid::new_v4().simple()));
        std::fs::write(&config, toml).unwrap();
        spawners.push(ServiceProcess::spawn(
            SPAWNER,
            &m.nats,
            &m.db,
            // Only the fake agent is runnable: the default clis (claude, codex, …) are not on
            // this PATH, so the hosts advertise exactly what the test configured.
            &[("RELAY_CONFIG", config.to_str().unwrap()), ("PATH", "/usr/bin:/bin")],
        ));
        configs.push(config);
    }
    relay_testkit::wait_for_instances(&m.client, "agent-spawner", 2).await;
    Mesh {
        m,
        _services: services,
        spawners,
        _configs: configs,
    }
}

impl Mesh {
    async fn session(&self) -> String {
        let r = self.m.ok("session.create", json!({})).await;
        r["sessionId"].as_str().unwrap().to_string()
    }

    async fn host(&self, id: &str) -> Value {
        let list = self.m.ok("host.list", json!({})).await;
        let hosts = list["hosts"].as_array().cloned().unwrap_or_default();
        hosts.into_iter().find(|h| h["hostId"] == id).unwrap_or(Value::Null)
    }

    async fn agent(&self, id: &str) -> Value {
        self.m.ok("agent.get", json!({ "agent": id })).await
    }

    async fn delivery(&self, id: &str) -> Value {
        self.m.ok("delivery.get", json!({ "deliveryId": id })).await
    }

    /// Sends `text` to `agent`; its delivery id.
    async fn send(&self, session: &str, agent: &str, text: &str) -> String {
        let sent = self
            .m
            .ok(
                "session.sendMessage",
                json!({"sessionId": session, "agentIds": [agent], "message": text}),
            )
            .await;
        sent["deliveryIds"][0].as_str().unwrap().to_string()
    }

    /// Waits until the session's log holds an event of type `t`.
    async fn wait_event(&self, session: &str, t: &str) {
        wait_for(|| async {
            let req = json!({ "seq": 0, "sessionIds": [session], "types": [t] });
            let page = self.m.ok("event.since", req).await;
            (!page["events"].as_array()?.is_empty()).then_some(())
        })
        .await
    }
}

fn error_text(e: &relay_bus::WireError) -> String {
    e.error.message.clone()
}

/// Processes whose command line mentions `needle` (Linux /proc).
fn pids_with(needle: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        String::from_utf8_lossy(&cmdline).contains(needle).then_some(pid)
    })
    .collect()
}

/// kill(2) on processes this test started.
fn signal(pids: &[i32], sig: nix::sys::signal::Signal) {
    for pid in pids {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid), sig);
    }
}

#[tokio::test]
async fn spawns_go_to_the_least_loaded_host_that_fits_or_are_refused_naming_why_none_fits() {
    let mesh = mesh("fail").await;
    let session = mesh.session().await;

    // Both hosts registered themselves: labels (with os and arch), capacity, clis.
    let beta = mesh.host("beta").await;
    assert_eq!(beta["status"], "online", "{beta}");
    assert_eq!(beta["labels"]["gpu"], "a100");
    assert_eq!(beta["labels"]["os"], std::env::consts::OS);
    assert_eq!(beta["capacity"], 2);
    assert_eq!(beta["clis"], json!(["claude", "codex"]));

    let spawn = |placement: Value, cli: &str| json!({ "sessionId": session, "cli": cli, "placement": placement });
    // A label only beta has.
    let gpu = mesh
        .m
        .ok("agent.spawn", spawn(json!({"labels": {"gpu": "a100"}}), "claude"))
        .await;
    assert_eq!(gpu["hostId"], "beta", "{gpu}");
    let on_beta = gpu["agentId"].as_str().unwrap();
    assert_eq!(mesh.agent(on_beta).await["hostId"], "beta");
    // No constraint: the least loaded (alpha 0 of 2, beta 1 of 2).
    let free = mesh.m.ok("agent.spawn", spawn(json!(null), "claude")).await;
    assert_eq!(free["hostId"], "alpha", "{free}");
    // Named host.
    let named = mesh
        .m
        .ok("agent.spawn", spawn(json!({"host": "alpha"}), "claude"))
        .await;
    assert_eq!(named["hostId"], "alpha", "{named}");
    // Loads as heartbeated: alpha is full.
    wait_for(|| async { (mesh.host("alpha").await["load"] == 2).then_some(()) }).await;

    // Nothing fits: each host is named with why.
    let full = mesh
        .m
        .err("agent.spawn", spawn(json!({"host": "alpha"}), "claude"), "unavailable")
        .await;
    assert!(error_text(&full).contains("alpha: full (2 of 2 agents"), "{full:?}");
    let h100 = mesh
        .m
        .err(
            "agent.spawn",
            spawn(json!({"labels": {"gpu": "h100"}}), "claude"),
            "unavailable",
        )
        .await;
    let text = error_text(&h100);
    assert!(
        text.contains("beta: gpu=a100, not h100") && text.contains("alpha: no label gpu"),
        "{text}"
    );
    let codex = mesh
        .m
        .err(
            "agent.spawn",
            spawn(json!({"labels": {"zone": "a"}}), "codex"),
            "unavailable",
        )
        .await;
    assert!(error_text(&codex).contains("alpha: does not run codex"), "{codex:?}");
    let nowhere = mesh
        .m
        .err("agent.spawn", spawn(json!({"host": "gamma"}), "claude"), "unavailable")
        .await;
    assert!(error_text(&nowhere).contains("no host gamma"), "{nowhere:?}");
    let unknown = mesh.m.err("agent.spawn", spawn(json!(null), "nano"), "not_found").await;
    assert!(error_text(&unknown).contains("claude, codex"), "{unknown:?}");
    mesh.m
        .err(
            "agent.spawn",
            spawn(json!({"labels": {"bad key": "x"}}), "claude"),
            "invalid_request",
        )
        .await;
    mesh.m
        .err("host.list", json!({"status": "gone"}), "invalid_request")
        .await;
    // A refused spawn attached nothing: three agents in the session.
    let listed = mesh.m.ok("agent.list", json!({ "sessionId": session })).await;
    assert_eq!(listed["agents"].as_array().map(Vec::len), Some(3), "{listed}");
}

#[tokio::test]
async fn a_silent_host_has_its_agents_offline_with_deliveries_held_then_lost_and_stopped_when_it_returns() {
    let mesh = mesh("fail").await;
    let session = mesh.session().await;
    let spawned = mesh
        .m
        .ok(
            "agent.spawn",
            json!({"sessionId": session, "cli": "claude", "placement": {"host": "beta"}}),
        )
        .await;
    let agent = spawned["agentId"].as_str().unwrap().to_string();
    let first = mesh.send(&session, &agent, "hello").await;
    wait_for(|| async { (mesh.delivery(&first).await["status"] == "delivered").then_some(()) }).await;

    // Beta freezes: its spawner and the agent's harness stop answering (a host cut off).
    let frozen: Vec<i32> = [mesh.spawners[1].pid() as i32]
        .into_iter()
        .chain(pids_with(&format!("--session\0{session}")))
        .collect();
    assert_eq!(frozen.len(), 2, "the spawner and one harness: {frozen:?}");
    signal(&frozen, nix::sys::signal::Signal::SIGSTOP);
    wait_for(|| async { (mesh.host("beta").await["status"] == "offline").then_some(()) }).await;
    assert!(mesh.agent(&agent).await["offlineSince"].is_i64());
    mesh.wait_event(&session, "session.agent.offline").await;
    assert_eq!(mesh.host("alpha").await["status"], "online", "alpha heartbeats on");

    // A message for it waits; once beta is back it is delivered, attempted once.
    let held = mesh.send(&session, &agent, "while you were away").await;
    wait_for(|| async { (mesh.delivery(&held).await["status"] == "pending").then_some(()) }).await;
    signal(&frozen, nix::sys::signal::Signal::SIGCONT);
    wait_for(|| async { (mesh.delivery(&held).await["status"] == "delivered").then_some(()) }).await;
    let d = mesh.delivery(&held).await;
    assert_eq!(d["attempts"], 1, "held, not tried against the silent host: {d}");
    assert!(mesh.agent(&agent).await["offlineSince"].is_null());
    mesh.wait_event(&session, "session.agent.online").await;

    // Frozen past hosts.lost_after_ms: the agent is ended and what waited for it fails, naming
    // the host; nothing is silently dropped.
    signal(&frozen, nix::sys::signal::Signal::SIGSTOP);
    wait_for(|| async { (mesh.host("beta").await["status"] == "offline").then_some(()) }).await;
    let lost = mesh.send(&session, &agent, "too late").await;
    wait_for(|| async { (mesh.host("beta").await["status"] == "lost").then_some(()) }).await;
    wait_for(|| async { (mesh.agent(&agent).await["status"] == "disposed").then_some(()) }).await;
    wait_for(|| async { (mesh.delivery(&lost).await["status"] == "failed").then_some(()) }).await;
    let d = mesh.delivery(&lost).await;
    assert!(
        d["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("lost with its host beta"),
        "{d}"
    );

    // Beta comes back: its spawner is told the agent was ended and stops its harness, so the
    // agent never runs twice.
    signal(&frozen, nix::sys::signal::Signal::SIGCONT);
    wait_for(|| async { (mesh.host("beta").await["status"] == "online").then_some(()) }).await;
    wait_for(|| async { pids_with(&format!("--session\0{session}")).is_empty().then_some(()) }).await;
    wait_for(|| async { (mesh.host("beta").await["agents"] == json!([])).then_some(()) }).await;
}

/// `hosts.on_lost = "rehome"`: a lost host's agent is placed on another host that fits it and
/// that host's spawner binds a new harness to it: same agent, its held delivery delivered there.
/// An agent whose placement only the lost host fits fails, naming it. When the lost host comes
/// back, its stale harness is killed without ending the agent, which carries on elsewhere.
#[tokio::test]
async fn a_lost_hosts_agents_are_rehomed_onto_a_host_that_fits_and_the_stale_harness_is_abandoned() {
    let mesh = mesh("rehome").await;
    let session = mesh.session().await;
    let spawn = |placement: Value| json!({"sessionId": session, "cli": "claude", "placement": placement});
    // Both on alpha: the first as the least loaded, the second pinned there by its zone.
    let free = mesh.m.ok("agent.spawn", spawn(json!(null))).await;
    let pinned = mesh.m.ok("agent.spawn", spawn(json!({"labels": {"zone": "a"}}))).await;
    assert_eq!((&free["hostId"], &pinned["hostId"]), (&json!("alpha"), &json!("alpha")));
    let (free, pinned) = (free["agentId"].as_str().unwrap(), pinned["agentId"].as_str().unwrap());
    let first = mesh.send(&session, free, "hello").await;
    wait_for(|| async { (mesh.delivery(&first).await["status"] == "delivered").then_some(()) }).await;

    // Alpha is cut off: messages for its agents wait.
    let harnesses = pids_with(&format!("--session\0{session}"));
    assert_eq!(harnesses.len(), 2, "{harnesses:?}");
    let frozen: Vec<i32> = [mesh.spawners[0].pid() as i32]
        .into_iter()
        .chain(harnesses.clone())
        .collect();
    signal(&frozen, nix::sys::signal::Signal::SIGSTOP);
    wait_for(|| async { (mesh.host("alpha").await["status"] == "offline").then_some(()) }).await;
    let held = mesh.send(&session, free, "while alpha was away").await;
    let stuck = mesh.send(&session, pinned, "only alpha fits").await;

    // Lost: the free agent moves to beta and gets its message there; the pinned one fails.
    wait_for(|| async { (mesh.host("alpha").await["status"] == "lost").then_some(()) }).await;
    wait_for(|| async { (mesh.delivery(&held).await["status"] == "delivered").then_some(()) }).await;
    let moved = mesh.agent(free).await;
    assert_eq!(moved["hostId"], "beta", "{moved}");
    assert!(moved["offlineSince"].is_null(), "{moved}");
    assert_eq!(moved["placement"], Value::Null, "spawned without one: {moved}");
    assert_eq!(mesh.agent(pinned).await["placement"]["labels"]["zone"], "a");
    wait_for(|| async { (mesh.host("beta").await["agents"] == json!([free])).then_some(()) }).await;
    // The move is recorded until beta reports the agent.
    let pool = mesh.m.db.pool().await;
    wait_for(|| async {
        let moving: i64 = sqlx::query_scalar("SELECT count(*) FROM registry_rehomes")
            .fetch_one(&pool)
            .await
            .unwrap();
        (moving == 0).then_some(())
    })
    .await;
    wait_for(|| async { (mesh.delivery(&stuck).await["status"] == "failed").then_some(()) }).await;
    let d = mesh.delivery(&stuck).await;
    assert!(
        d["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("lost with its host alpha"),
        "{d}"
    );
    assert_eq!(mesh.agent(pinned).await["status"], "disposed");

    // Alpha returns: both stale harnesses go (one abandoned, one stopped); the moved agent
    // stays attached on beta and takes the next message once.
    signal(&frozen, nix::sys::signal::Signal::SIGCONT);
    wait_for(|| async { (mesh.host("alpha").await["status"] == "online").then_some(()) }).await;
    wait_for(|| async {
        let alive = harnesses
            .iter()
            .any(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
        (!alive).then_some(())
    })
    .await;
    wait_for(|| async { (mesh.host("alpha").await["agents"] == json!([])).then_some(()) }).await;
    let after = mesh.agent(free).await;
    assert_ne!(after["status"], "disposed", "{after}");
    assert_eq!(after["hostId"], "beta", "{after}");
    let next = mesh.send(&session, free, "still there?").await;
    wait_for(|| async { (mesh.delivery(&next).await["status"] == "delivered").then_some(()) }).await;
    assert_eq!(mesh.delivery(&next).await["attempts"], 1);
}
