//! What a harness leaves behind and what it sends back, with real harnesses running the fake
//! agent on a private NATS and a fresh database: its socket directory goes however it ends (and
//! the spawner sweeps the one a killed harness could not remove), and a bad request gets an
//! answer cut to fit, however big the value serde echoes.

use relay_testkit::{Cluster, ServiceProcess, wait_for};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const HARNESS: &str = env!("CARGO_BIN_EXE_agent-harness");
const SPAWNER: &str = env!("CARGO_BIN_EXE_agent-spawner");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-agent");

struct Mesh {
    m: Cluster,
    _services: Vec<ServiceProcess>,
    /// The harnesses' XDG_RUNTIME_DIR: their socket directories, and only theirs.
    runtime: PathBuf,
}

async fn mesh() -> Mesh {
    let m = Cluster::start(&relay_testkit::bin_path("delivery-runner"), "delivery-runner", 1, &[]).await;
    let services = vec![
        ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &m.nats, &m.db, &[]),
        ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &m.nats, &m.db, &[]),
    ];
    for name in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&m.client, name, 1).await;
    }
    // Short: the socket's path must fit a sockaddr_un (108 bytes).
    let runtime = std::env::temp_dir().join(format!("rt-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]));
    std::fs::create_dir_all(&runtime).unwrap();
    Mesh {
        m,
        _services: services,
        runtime,
    }
}

impl Mesh {
    fn env(&self) -> [(&str, &str); 1] {
        [("XDG_RUNTIME_DIR", self.runtime.to_str().unwrap())]
    }

    /// A harness running the fake agent in `session` (with `args` before `--`), once attached:
    /// the process and its agent id.
    async fn harness(&self, session: &str, args: &[&str]) -> (ServiceProcess, String) {
        let mut all = vec!["--session", session, "--cli", "claude"];
        all.extend_from_slice(args);
        all.extend(["--", FAKE, "--style", "claude"]);
        let harness = ServiceProcess::spawn_with_args(HARNESS, &all, &self.m.nats, &self.m.db, &self.env());
        let agent = wait_for(|| async {
            let s = self.m.call("session.get", json!({"sessionId": session})).await.ok()?;
            s["session"]["agents"][0]["agentId"].as_str().map(String::from)
        })
        .await;
        // Ready (its SIGTERM handler set, too) once the runner learned the agent is idle.
        let pool = self.m.db.pool().await;
        wait_for(|| async {
            let status: Option<Option<String>> =
                sqlx::query_scalar("SELECT status FROM delivery_agents WHERE agent_id = $1")
                    .bind(&agent)
                    .fetch_optional(&pool)
                    .await
                    .ok()?;
            (status.flatten().as_deref() == Some("idle")).then_some(())
        })
        .await;
        (harness, agent)
    }

    /// The socket directories under the runtime dir.
    fn socket_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&self.runtime)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("relay-harness-"))
            .collect();
        dirs.sort();
        dirs
    }

    async fn wait_no_socket_dirs(&self, how: &str) {
        let within = Instant::now() + Duration::from_secs(10);
        while !self.socket_dirs().is_empty() {
            assert!(
                Instant::now() < within,
                "{how}: the harness left {:?}",
                self.socket_dirs()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.runtime);
    }
}

fn exists(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok()
}

#[tokio::test]
async fn a_harness_removes_its_socket_directory_however_it_ends() {
    let mesh = mesh().await;

    // SIGTERM.
    let (mut h, _) = mesh.harness("term", &[]).await;
    assert_eq!(
        mesh.socket_dirs().len(),
        1,
        "a running harness has its socket directory"
    );
    assert!(h.terminate().await);
    mesh.wait_no_socket_dirs("SIGTERM").await;

    // Released (agent.stop through the delivery runner).
    let (mut h, agent) = mesh.harness("release", &[]).await;
    mesh.m
        .ok("agent.stop", json!({"agentId": agent, "reason": "done"}))
        .await;
    assert_eq!(h.wait_exit(Duration::from_secs(15)).await, Some(true));
    mesh.wait_no_socket_dirs("released").await;

    // The agent exits on its own.
    let (mut h, agent) = mesh.harness("exit", &[]).await;
    mesh.m
        .ok("agent.input", json!({"agentId": agent, "data": "exit\r"}))
        .await;
    assert!(
        h.wait_exit(Duration::from_secs(15)).await.is_some(),
        "the harness ends with its agent"
    );
    mesh.wait_no_socket_dirs("agent exit").await;

    // An error after the socket is bound (a sandbox it does not know): no agent ever attaches.
    let mut h = ServiceProcess::spawn_with_args(
        HARNESS,
        &["--session", "error", "--sandbox", "nonsense", "--", FAKE],
        &mesh.m.nats,
        &mesh.m.db,
        &mesh.env(),
    );
    assert_eq!(h.wait_exit(Duration::from_secs(15)).await, Some(false), "it fails");
    assert!(
        std::fs::read_to_string(&h.log).unwrap().contains("nonsense"),
        "it failed on the sandbox"
    );
    mesh.wait_no_socket_dirs("error").await;
}

#[tokio::test]
async fn the_spawner_sweeps_the_socket_directories_killed_harnesses_left() {
    let mesh = mesh().await;

    // A harness killed with kill -9 cannot clean up.
    let (mut killed, _) = mesh.harness("killed", &[]).await;
    let left = mesh.socket_dirs();
    assert_eq!(left.len(), 1);
    killed.kill9().await;
    assert_eq!(killed.wait_exit(Duration::from_secs(5)).await, Some(false));
    assert!(exists(&left[0]), "nothing removed it yet");

    // Directories of older harnesses, with no pid in their names: one whose socket nobody
    // listens on any more (swept), one whose harness still listens (kept), a fresh one (kept).
    let old = |name: &str| {
        let dir = mesh.runtime.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let dead_old = old("relay-harness-01a2224a-0000-7000-8000-000000000001");
    std::os::unix::net::UnixListener::bind(dead_old.join("tools.sock")).unwrap();
    let live_old = old("relay-harness-01a2224a-0000-7000-8000-000000000002");
    let _listening = std::os::unix::net::UnixListener::bind(live_old.join("tools.sock")).unwrap();
    for dir in [&dead_old, &live_old] {
        let status = std::process::Command::new("touch")
            .args(["-d", "2 hours ago"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
    let fresh_old = old("relay-harness-01a2224a-0000-7000-8000-000000000003");

    // A running harness's directory is kept.
    let (_running, _) = mesh.harness("running", &[]).await;
    let running = mesh
        .socket_dirs()
        .into_iter()
        .find(|d| *d != left[0] && d.to_string_lossy().contains("-p"))
        .unwrap();

    // The spawner sweeps at start.
    let config = std::env::temp_dir().join(format!("sweep-{}.toml", uuid::Uuid::new_v4().simple()));
    let toml = format!("[spawner.commands]\nclaude = [{FAKE:?}, \"--style\", \"claude\"]\n");
    std::fs::write(&config, toml).unwrap();
    let env = [
        ("XDG_RUNTIME_DIR", mesh.runtime.to_str().unwrap()),
        ("RELAY_CONFIG", config.to_str().unwrap()),
    ];
    let _spawner = ServiceProcess::spawn(SPAWNER, &mesh.m.nats, &mesh.m.db, &env);
    wait_for(|| async { (!exists(&left[0]) && !exists(&dead_old)).then_some(()) }).await;
    assert!(exists(&running) && exists(&live_old) && exists(&fresh_old));

    // And after a harness it runs is killed (which it then starts again, in a directory of
    // its own).
    relay_testkit::wait_for_instances(&mesh.m.client, "agent-spawner", 1).await;
    let session = mesh.m.ok("session.create", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    mesh.m
        .ok("agent.spawn", json!({"sessionId": session, "cli": "claude"}))
        .await;
    let before = mesh.socket_dirs();
    let spawned = before
        .iter()
        .find(|d| **d != running && d.to_string_lossy().contains("-p"))
        .unwrap()
        .clone();
    let pid: i32 = spawned.file_name().unwrap().to_string_lossy()["relay-harness-p".len()..]
        .split('-')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // A harness this test had the spawner start.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).expect("killed");
    wait_for(|| async { (!exists(&spawned)).then_some(()) }).await;
}

#[tokio::test]
async fn a_bad_request_with_a_huge_value_is_answered_with_the_value_cut_short() {
    let mesh = mesh().await;
    let (_h, agent) = mesh.harness("echo", &[]).await;
    // A JSON string where an object is expected: serde's error quotes the whole string.
    let huge = Value::String("A".repeat(600_000));
    let payload = serde_json::to_vec(&huge).unwrap();
    for subject in [
        relay_contracts::rpc::agent::deliver(&agent),
        relay_contracts::rpc::agent::input(&agent),
        relay_contracts::rpc::agent::turn(&agent),
        relay_contracts::rpc::agent::cancel(&agent),
        relay_contracts::rpc::agent::invoke(&agent),
        relay_contracts::rpc::agent::permission(&agent),
        relay_contracts::rpc::agent::question(&agent),
    ] {
        let started = Instant::now();
        let reply = tokio::time::timeout(
            Duration::from_secs(5),
            mesh.m.client.request(subject.clone(), payload.clone().into()),
        )
        .await
        .unwrap_or_else(|_| panic!("{subject}: no answer within 5 s"))
        .unwrap_or_else(|e| panic!("{subject}: {e}"));
        let body: Value = serde_json::from_slice(&reply.payload).unwrap();
        let message = body["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{subject}: {body}"));
        assert_eq!(body["error"]["code"], "invalid_request", "{subject}: {body}");
        assert!(message.contains("invalid type"), "{subject}: {message}");
        assert!(message.len() < 2100, "{subject}: {} bytes of message", message.len());
        assert!(reply.payload.len() < 4096, "{subject}: {} bytes", reply.payload.len());
        assert!(started.elapsed() < Duration::from_secs(2), "{subject}");
    }
}
