//! The mesh the client tests talk to: registry, event log, delivery runner, permission manager,
//! cost aggregator and an agent-spawner whose CLIs are the fake agent, on a private NATS and a
//! fresh database.
#![allow(dead_code)] // each test file uses its own part

use relay_client::Client;
use relay_testkit::{Database, Nats, ServiceProcess, bin_path, wait_for};
use serde_json::Value;
use std::path::PathBuf;

/// The host id of the mesh's spawner.
pub const TEST_HOST: &str = "local";

/// The subject a call of `r` goes to: its own, or the mesh spawner's instance of a
/// per-instance subject (`agent.spawnOn.local`).
pub fn served_at(r: &relay_client::contracts::rpc::RpcInfo) -> String {
    use relay_client::contracts::rpc;
    match rpc::PER_INSTANCE.contains(&r.subject) {
        true => rpc::instance_subject(r.subject, TEST_HOST),
        false => r.subject.to_string(),
    }
}

pub use relay_testkit::BUS_SERVICES as SERVICES;

pub struct Mesh {
    pub nats: Nats,
    pub db: Database,
    pub client: Client,
    pub services: Vec<ServiceProcess>,
    pub spawner: ServiceProcess,
    /// A file the `flaky` and `crashy` CLIs use to tell their first start from later ones.
    pub marker: PathBuf,
    config: PathBuf,
}

fn temp(stem: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{stem}-{}.{ext}", uuid::Uuid::new_v4().simple()))
}

/// The mesh, with a spawner allowed `max_agents` at once. Its CLIs:
/// - `claude`: the fake agent;
/// - `flaky`: exits before attaching on its first start, the fake agent afterwards;
/// - `crashy`: the fake agent killed after 1.5 s on its first start, left alone afterwards.
pub async fn mesh(max_agents: usize) -> Mesh {
    let nats = Nats::start().await;
    let db = Database::create().await;
    let nats_client = nats.client().await;
    let services = SERVICES
        .iter()
        .chain(&["automation"])
        .map(|s| ServiceProcess::spawn(&bin_path(s), &nats, &db, &[]))
        .collect();
    let fake = bin_path("fake-agent");
    let marker = temp("first-start", "marker");
    let config = temp("spawner", "toml");
    // `flaky` and `crashy` are the fake claude, read with the claude patterns.
    let once = |name: &str, first: &str| {
        let script = format!(
            "if [ -e '{m}' ]; then exec '{fake}' --style claude; else touch '{m}'; {first}; fi",
            m = marker.display()
        );
        format!(
            "[spawner.agents.{name}]\ncommand = [\"sh\", \"-c\", {script:?}]\nprotocol = \"pty\"\npatterns = \"claude\"\n"
        )
    };
    let toml = format!(
        "[spawner]\nhost_id = {TEST_HOST:?}\nmax_agents = {max_agents}\nattach_timeout_ms = 20000\n\n[spawner.commands]\n\
         claude = [{fake:?}, \"--style\", \"claude\"]\n\n{flaky}\n{crashy}",
        flaky = once("flaky", "exit 3"),
        crashy = once("crashy", &format!("exec timeout 1.5 '{fake}' --style claude")),
    );
    std::fs::write(&config, toml).unwrap();
    let spawner = ServiceProcess::spawn(
        &bin_path("agent-spawner"),
        &nats,
        &db,
        &[("RELAY_CONFIG", config.to_str().unwrap())],
    );
    for s in SERVICES.iter().chain(&["automation", "agent-spawner"]) {
        relay_testkit::wait_for_instances(&nats_client, s, 1).await;
    }
    Mesh {
        nats,
        db,
        client: Client::new(nats_client),
        services,
        spawner,
        marker,
        config,
    }
}

impl Mesh {
    /// The session's agents as the registry lists them.
    pub async fn agents(&self, session_id: &str) -> Vec<Value> {
        let got = self
            .client
            .session_get(&relay_client::contracts::session::SessionRef {
                session_id: session_id.into(),
            })
            .await
            .unwrap();
        let session = serde_json::to_value(got.session.unwrap()).unwrap();
        session["agents"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until every agent the session ever had is released, and returns how many it had.
    pub async fn all_released(&self, session_id: &str) -> usize {
        wait_for(|| async {
            let agents = self.agents(session_id).await;
            agents.iter().all(|a| a["status"] == "disposed").then_some(agents.len())
        })
        .await
    }
}

impl Mesh {
    /// The most agents of the session alive at once, from its `status.changed` events in seq
    /// order: alive from `starting` until the first of `releasing`, `released`, `offline` or
    /// `failed`. `released` is in the log before the release's reply frees the pattern's slot;
    /// `offline` comes later, from the exiting harness, racing the next worker's `starting`.
    pub async fn most_agents_at_once(&self, session_id: &str) -> usize {
        use relay_client::contracts::events::QueryRequest;
        let page = self
            .client
            .event_query(&QueryRequest {
                types: Some(vec!["status.changed".into()]),
                session_ids: Some(vec![session_id.into()]),
                limit: Some(10_000),
                ..Default::default()
            })
            .await
            .unwrap();
        let mut alive = std::collections::HashSet::new();
        let mut most = 0usize;
        for e in page.events {
            let agent = e.agent_id.clone().unwrap_or_default();
            match e.payload["status"].as_str() {
                Some("starting") => {
                    alive.insert(agent);
                }
                Some("releasing" | "released" | "offline" | "failed") => {
                    alive.remove(&agent);
                }
                _ => {}
            }
            most = most.max(alive.len());
        }
        most
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.config);
        let _ = std::fs::remove_file(&self.marker);
    }
}
