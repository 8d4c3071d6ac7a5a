//! A registry under test: its own nats-server, its own database, real registry processes.
#![allow(dead_code)]

use relay_contracts::WireError;
use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_session-registry");

pub struct Mesh {
    pub nats: Nats,
    pub db: Database,
    pub replicas: Vec<ServiceProcess>,
    pub client: async_nats::Client,
}

impl Mesh {
    /// NATS, a fresh database and `n` registry replicas, all serving.
    pub async fn start(n: usize) -> Mesh {
        let nats = Nats::start().await;
        let db = Database::create().await;
        let client = nats.client().await;
        let mut mesh = Mesh {
            nats,
            db,
            replicas: Vec::new(),
            client,
        };
        for _ in 0..n {
            mesh.add_replica().await;
        }
        mesh
    }

    /// A registry on its own: it neither forwards to nor purges from the event log (that is
    /// tested with event-ingest running in with_event_log.rs).
    pub async fn add_replica(&mut self) {
        let env = [
            ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
            ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
        ];
        self.replicas
            .push(ServiceProcess::spawn(BIN, &self.nats, &self.db, &env));
        relay_testkit::wait_for_instances(&self.client, "session-registry", self.replicas.len()).await;
    }

    /// Replaces the first replica (already killed) with a fresh one and waits until the
    /// survivors plus the newcomer all answer `$SRV.PING`.
    pub async fn add_replica_after_kill(&mut self) {
        self.replicas.remove(0);
        self.add_replica().await;
    }

    pub async fn call(&self, subject: &str, body: Value) -> Result<Value, WireError> {
        relay_testkit::call_json(&self.client, subject, body).await
    }

    /// A call that must succeed.
    pub async fn ok(&self, subject: &str, body: Value) -> Value {
        relay_testkit::expect_ok(&self.client, subject, body).await
    }

    /// A call that must fail with `code`; returns the error.
    pub async fn err(&self, subject: &str, body: Value, code: &str) -> WireError {
        relay_testkit::expect_err(&self.client, subject, body, code).await
    }

    pub async fn create(&self) -> String {
        self.ok("session.create", serde_json::json!({})).await["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    }
}
