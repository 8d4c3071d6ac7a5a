//! An event log under test: its own nats-server, its own database, real event-ingest processes.
#![allow(dead_code)]

use relay_testkit::Cluster;
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_event-ingest");

pub type Log = Cluster;

pub async fn start(n: usize, env: &[(&str, &str)]) -> Log {
    Cluster::start(BIN, "event-ingest", n, env).await
}

/// Every event from seq 0, page by page through `event.since`.
pub async fn replay_all(log: &Log) -> Vec<Value> {
    let (mut out, mut from) = (Vec::new(), 0);
    loop {
        let page = log.ok("event.since", json!({"seq": from, "limit": 1000})).await;
        let events = page["events"].as_array().unwrap().clone();
        if events.is_empty() {
            return out;
        }
        from = page["nextSeq"].as_i64().unwrap();
        out.extend(events);
    }
}

pub fn tool(i: usize, session: &str) -> Value {
    json!({"type": "tool.called", "sessionId": session, "agentName": "coder", "payload": {"tool": "bash", "input": {"n": i}}})
}
