//! Coordination under test: its own nats-server and database, a real registry (which owns
//! the agents, channels and messages coordination asks about) and real coordination processes.
#![allow(dead_code)]

use relay_testkit::{Cluster, ServiceProcess};

pub const BIN: &str = env!("CARGO_BIN_EXE_coordination");

/// The registry cluster (its NATS, database and client) with coordination beside it.
pub struct Mesh {
    registry: Cluster,
    pub coordination: Vec<ServiceProcess>,
}

impl std::ops::Deref for Mesh {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.registry
    }
}

/// NATS, a fresh database, one registry and `n` coordination replicas, on their own: neither
/// forwards to the event log, and the registry hands nothing to a delivery runner.
pub async fn start(n: usize) -> Mesh {
    let env = [
        ("RELAY_REGISTRY__PURGE_EVENT_LOG", "false"),
        ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
        ("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false"),
    ];
    let registry = Cluster::start(
        &relay_testkit::bin_path("session-registry"),
        "session-registry",
        1,
        &env,
    )
    .await;
    let mut m = Mesh {
        registry,
        coordination: Vec::new(),
    };
    for _ in 0..n {
        m.coordination.push(ServiceProcess::spawn(
            BIN,
            &m.nats,
            &m.db,
            &[("RELAY_COORDINATION__FORWARD_EVENTS", "false")],
        ));
    }
    relay_testkit::wait_for_instances(&m.client, "coordination", n).await;
    m
}

/// A new session's id.
pub async fn create(m: &Mesh) -> String {
    m.new_session().await
}

/// Attaches an agent of adapter `claude` with `handle` and `capabilities` to `session`; its id.
pub async fn attach(m: &Mesh, session: &str, handle: &str, capabilities: serde_json::Value) -> String {
    m.attach_agent(session, handle, capabilities).await
}

/// The types of coordination's events whose payload has `field` = `value`, in order.
pub async fn event_types(m: &Mesh, field: &str, value: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT type FROM coordination_events WHERE payload->>$1 = $2 ORDER BY seq")
        .bind(field)
        .bind(value)
        .fetch_all(&m.db.pool().await)
        .await
        .unwrap()
}
