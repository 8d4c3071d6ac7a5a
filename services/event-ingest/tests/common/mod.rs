//! An event log under test: its own nats-server, its own database, real event-ingest processes.
#![allow(dead_code)]

use relay_contracts::WireError;
use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_event-ingest");

pub struct Log {
    pub nats: Nats,
    pub db: Database,
    pub replicas: Vec<ServiceProcess>,
    pub client: async_nats::Client,
}

impl Log {
    pub async fn start(n: usize, env: &[(&str, &str)]) -> Log {
        let nats = Nats::start().await;
        let db = Database::create().await;
        let client = nats.client().await;
        let mut log = Log {
            nats,
            db,
            replicas: Vec::new(),
            client,
        };
        for _ in 0..n {
            log.add_replica(env).await;
        }
        log
    }

    pub async fn add_replica(&mut self, env: &[(&str, &str)]) {
        self.replicas
            .push(ServiceProcess::spawn(BIN, &self.nats, &self.db, env));
        relay_testkit::wait_for_instances(&self.client, "event-ingest", self.replicas.len()).await;
    }

    pub async fn call(&self, subject: &str, body: Value) -> Result<Value, WireError> {
        relay_testkit::call_json(&self.client, subject, body).await
    }

    pub async fn ok(&self, subject: &str, body: Value) -> Value {
        relay_testkit::expect_ok(&self.client, subject, body).await
    }

    pub async fn err(&self, subject: &str, body: Value, code: &str) -> WireError {
        relay_testkit::expect_err(&self.client, subject, body, code).await
    }

    /// Every event from seq 0, page by page through `event.since`.
    pub async fn replay_all(&self) -> Vec<Value> {
        let (mut out, mut from) = (Vec::new(), 0);
        loop {
            let page = self.ok("event.since", json!({"seq": from, "limit": 1000})).await;
            let events = page["events"].as_array().unwrap().clone();
            if events.is_empty() {
                return out;
            }
            from = page["nextSeq"].as_i64().unwrap();
            out.extend(events);
        }
    }
}

pub fn tool(i: usize, session: &str) -> Value {
    json!({"type": "tool.called", "sessionId": session, "agentName": "coder", "payload": {"tool": "bash", "input": {"n": i}}})
}
