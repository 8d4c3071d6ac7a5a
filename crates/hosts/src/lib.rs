//! Agent hosts (`host.*`): every agent-spawner registers the machine it runs on and
//! heartbeats; a spawn is placed on the least-loaded host that fits it; a host that goes quiet
//! is offline (its agents' deliveries held), then lost (`hosts.on_lost`: its agents ended,
//! kept waiting, or re-homed onto another host, whose spawner starts them again). A library
//! that a service hosts, by data ownership: its tables (`registry_hosts`, `registry_rehomes`)
//! are the session registry's, whose agents the hosts run — an agent's host and whether it is
//! offline are part of the agent, changed under its session's lock — and the registry
//! registers these handlers ([`serve`]) and runs the sweep ([`start`]).
//!
//! The spawner side (heartbeats, `agent.spawnOn.<host>`) is `services/agent-harness/src/spawner.rs`.
//!
//! # Layout
//! - [`heartbeat`]: `host.heartbeat`, and an agent's host settled (offline, back online).
//! - [`placement`]: `host.place`, `host.list`, and the host table's SQL.
//! - [`sweep`](mod@sweep): quiet hosts offline, then lost; re-homing their agents.
//! - [`error`]: [`HostsError`], mapped once onto the wire.

mod error;
mod heartbeat;
mod placement;
mod sweep;

pub use error::HostsError;

use error::Result;
use relay_bus::service::{ServiceError, ServiceHost};
use relay_contracts::rpc;
use relay_contracts::session::{Agent, EventPayload, Session};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool};
use std::future::Future;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct HostSettings {
    /// A host with no heartbeat for this long is offline: its agents' deliveries are held.
    pub offline_after_ms: i64,
    /// An offline host is lost after this long, and `on_lost` applies to its agents.
    pub lost_after_ms: i64,
    pub on_lost: OnLost,
}

/// What becomes of a lost host's agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnLost {
    /// Ended: their waiting deliveries fail with the host named, and the spawner stops their
    /// harnesses if the host comes back.
    Fail,
    /// Kept: their deliveries wait for the host to come back.
    Hold,
    /// Moved: each is placed on another online host that runs its cli and fits its placement,
    /// whose spawner starts a harness bound to it (same id, handle and waiting deliveries; a
    /// new CLI session). One that no host fits, or whose new harness does not start, fails.
    Rehome,
}

impl Default for HostSettings {
    fn default() -> Self {
        HostSettings {
            offline_after_ms: 15_000,
            lost_after_ms: 300_000,
            on_lost: OnLost::Fail,
        }
    }
}

/// What the handlers and the sweep work with.
#[derive(Clone)]
pub struct Hosts {
    pub db: PgPool,
    pub nats: async_nats::Client,
    pub settings: HostSettings,
}

/// The service that keeps the agents the hosts run (the session registry).
pub trait Keeper: Clone + Send + Sync + 'static {
    type Change: Change;

    fn hosts(&self) -> &Hosts;

    /// A transaction whose events are recorded with it ([`Change::emit`]).
    fn begin(&self) -> impl Future<Output = Result<Self::Change>> + Send;

    /// Those of `agent_ids` that exist.
    fn agents(conn: &mut PgConnection, agent_ids: &[String]) -> impl Future<Output = Result<Vec<Agent>>> + Send;

    /// The attached agents last known on `host`, in id order.
    fn agents_on(conn: &mut PgConnection, host: &str) -> impl Future<Output = Result<Vec<String>>> + Send;

    /// Those of `agent_ids` that belong to `workspace`.
    fn agents_in_workspace(
        conn: &mut PgConnection,
        agent_ids: &[&str],
        workspace: &str,
    ) -> impl Future<Output = Result<Vec<String>>> + Send;

    /// The workspace of a session.
    fn session_workspace(
        conn: &mut PgConnection,
        session_id: &str,
    ) -> impl Future<Output = Result<Option<String>>> + Send;
}

/// One change in the keeper's tables: a transaction and the events it records.
pub trait Change: Send {
    fn conn(&mut self) -> &mut PgConnection;

    /// The agent and its session, locked; `None` once it was released (it went its own way
    /// meanwhile: nothing left to do).
    fn lock_attached(&mut self, agent_id: &str) -> impl Future<Output = Result<Option<(Session, Agent)>>> + Send;

    /// Saves the agent's changed host or offline state in its locked session.
    fn save(&mut self, session: &mut Session, agent: &mut Agent, now: i64) -> impl Future<Output = Result<()>> + Send;

    /// Ends the agent: its waiting deliveries fail, naming its host.
    fn dispose(&mut self, session: &mut Session, agent: &mut Agent) -> impl Future<Output = Result<()>> + Send;

    /// Records `payload` on a session's stream.
    fn emit<P: EventPayload + Send>(&mut self, session_id: &str, payload: P)
    -> impl Future<Output = Result<()>> + Send;

    fn commit(self) -> impl Future<Output = Result<()>> + Send;
}

/// Registers the `host.*` endpoints on the keeper's micro service.
pub async fn serve<K: Keeper>(host: &mut ServiceHost<K>) -> std::result::Result<(), ServiceError> {
    host.serve::<rpc::HostHeartbeat>(heartbeat::heartbeat::<K>).await?;
    host.serve::<rpc::HostPlace>(placement::place::<K>).await?;
    host.serve::<rpc::HostList>(placement::list::<K>).await?;
    Ok(())
}

/// Checks the hosts' heartbeats every second.
pub fn start<K: Keeper>(keeper: K) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(1000));
        loop {
            tick.tick().await;
            if let Err(e) = sweep::sweep(&keeper).await {
                tracing::warn!(error = %e, "cannot check the agent hosts' heartbeats yet");
            }
        }
    });
}
