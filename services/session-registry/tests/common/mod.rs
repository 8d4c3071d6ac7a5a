//! A registry under test: its own nats-server, its own database, real registry processes.
#![allow(dead_code)]

use relay_testkit::Cluster;

pub const BIN: &str = env!("CARGO_BIN_EXE_session-registry");

pub type Mesh = Cluster;

/// NATS, a fresh database and `n` registry replicas on their own: they neither forward to nor
/// purge from the event log (tested with event-ingest running in with_event_log.rs), and hand
/// nothing to a delivery runner.
pub async fn start(n: usize) -> Mesh {
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
        ("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false"),
    ];
    Cluster::start(BIN, "session-registry", n, &env).await
}

/// A new session's id.
pub async fn create(m: &Mesh) -> String {
    m.new_session().await
}

/// Attaches an agent of adapter `claude` with `handle` and `capabilities` to `session`; its id.
pub async fn attach(m: &Mesh, session: &str, handle: &str, capabilities: serde_json::Value) -> String {
    m.attach_agent(session, handle, capabilities).await
}

/// The types of the registry's events whose payload has `field` = `value`, in order.
pub async fn event_types(m: &Mesh, field: &str, value: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT type FROM registry_events WHERE payload->>$1 = $2 ORDER BY seq")
        .bind(field)
        .bind(value)
        .fetch_all(&m.db.pool().await)
        .await
        .unwrap()
}
