//! Coordination: what agents do together beyond messages, answered over NATS on the
//! `action.*` and `consensus.*` subjects, kept in Postgres.
//!
//! # Layout
//! - [`actions`]: `action.expose`, `action.list`, `action.invoke`. An invocation is checked
//!   against its schema and `availableTo`, decided by the permission manager's policies, sent
//!   to the exposing harness (`agent.<agentId>.invoke`) and recorded; one a person must decide
//!   waits `pending` and runs from the [`sweep`] once decided.
//! - [`consensus`]: `consensus.propose`, `.vote`, `.cancel`, `.get`, `.list`; open proposals
//!   past their deadline expire in the [`sweep`].
//! - [`registry`]: everything asked of the session registry, which owns agents, channels and
//!   relay messages: an agent's record, a channel's members, the AG-UI tools of an agent that
//!   exposes actions, and the relay messages coordination sends (a proposal's question, an
//!   invocation's result).
//! - [`change`]: a transaction and the events it writes to the outbox (`coordination_events`),
//!   forwarded to the event log after the commit.
//! - [`error`]: one error type, mapped once onto the wire.
//!
//! It is its own service so that an invocation waiting up to 30 s for an agent, or a sweep,
//! takes nothing from the registry's in-flight budget (`session.get`), and fails on its own.

mod actions;
mod change;
mod consensus;
mod error;
mod registry;

pub use error::CoordinationError;

use relay_bus::outbox::{self, Outbox};
use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::rpc;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

pub const SERVICE_NAME: &str = rpc::service::COORDINATION;

/// `coordination_events` rows keep their type in the log (`action.invoked`, `consensus.voted`).
pub(crate) const OUTBOX: Outbox = Outbox {
    table: "coordination_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7963_6f6f, // "relaycoo"
    prune: true,
};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub coordination: CoordinationSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct CoordinationSettings {
    /// Forward the outbox's events to the event log (event-ingest). Off only for a
    /// coordination service running alone: its events wait in the outbox.
    pub forward_events: bool,
    /// How long a finished invocation and a decided proposal are kept (0: forever).
    pub keep_ms: u64,
}

impl Default for CoordinationSettings {
    fn default() -> Self {
        CoordinationSettings {
            forward_events: true,
            keep_ms: 30 * 24 * 3_600_000,
        }
    }
}

/// Handler state: cheap to clone, shared by every request.
#[derive(Clone)]
pub struct Coordination {
    db: PgPool,
    nats: async_nats::Client,
    /// Poked after each commit that wrote events, so the outbox forwards them at once.
    outbox: Arc<Notify>,
}

impl Coordination {
    /// Builds the handler state and starts the outbox, the sweep and retention.
    pub fn start(db: PgPool, nats: async_nats::Client, settings: CoordinationSettings) -> Self {
        let outbox = outbox::start(OUTBOX, &db, &nats, settings.forward_events);
        let c = Coordination { db, nats, outbox };
        tokio::spawn(sweep(c.clone()));
        if settings.keep_ms > 0 {
            relay_bus::retention::spawn(
                &c.db,
                "finished invocations and decided proposals",
                Duration::from_millis(settings.keep_ms),
                vec![
                    "DELETE FROM coordination_invocations WHERE (workspace, caller, invocation_id) IN (
                       SELECT workspace, caller, invocation_id FROM coordination_invocations
                       WHERE doc->>'completedAt' IS NOT NULL AND (doc->>'completedAt')::bigint < $1
                         AND NOT tell_pending
                       ORDER BY (doc->>'completedAt')::bigint LIMIT $2)"
                        .into(),
                    "DELETE FROM coordination_proposals WHERE proposal_id IN (
                       SELECT proposal_id FROM coordination_proposals WHERE status <> 'open' AND deadline < $1
                       ORDER BY deadline LIMIT $2)"
                        .into(),
                ],
            );
        }
        c
    }
}

/// Carries on what waits: invocations a person decided (woken at once by the decision, else
/// found within a second), outcomes not yet told to their invokers, and proposals past their
/// deadline.
async fn sweep(c: Coordination) {
    use futures::StreamExt;
    let mut decisions = match c.nats.subscribe(relay_contracts::access::PERMISSION_RESOLVED).await {
        Ok(sub) => Some(sub),
        Err(e) => {
            tracing::warn!(error = %e, "cannot follow permission decisions; invocations wait for the sweep");
            None
        }
    };
    loop {
        let tick = tokio::time::sleep(Duration::from_millis(1000));
        match decisions.as_mut() {
            Some(sub) => {
                tokio::select! {
                    _ = sub.next() => {}
                    () = tick => {}
                }
            }
            None => tick.await,
        }
        if let Err(e) = actions::sweep(&c).await {
            tracing::warn!(error = %e, "cannot carry on decided invocations yet");
        }
        if let Err(e) = consensus::sweep(&c).await {
            tracing::warn!(error = %e, "cannot expire proposals yet");
        }
    }
}

/// Registers the micro service and every endpoint.
pub async fn serve(nats: async_nats::Client, c: Coordination) -> Result<ServiceHost<Coordination>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Actions and consensus (action.*, consensus.* subjects)",
        c,
    )
    .await?;
    host.serve::<rpc::ActionExpose>(actions::expose).await?;
    host.serve::<rpc::ActionList>(actions::list).await?;
    host.serve::<rpc::ActionInvoke>(actions::invoke).await?;
    host.serve::<rpc::ConsensusPropose>(consensus::propose).await?;
    host.serve::<rpc::ConsensusVote>(consensus::vote).await?;
    host.serve::<rpc::ConsensusCancel>(consensus::cancel).await?;
    host.serve::<rpc::ConsensusGet>(consensus::get).await?;
    host.serve::<rpc::ConsensusList>(consensus::list).await?;
    Ok(host)
}

/// A new id: a v7 UUID, time-ordered.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub(crate) fn check_id(field: &str, id: &str) -> error::Result<()> {
    relay_contracts::id_problem(field, id).map_or(Ok(()), |m| Err(CoordinationError::Invalid(m)))
}

pub(crate) fn check_text(field: &str, text: &str, most: usize) -> error::Result<()> {
    relay_contracts::text_problem(field, text, most).map_or(Ok(()), |m| Err(CoordinationError::Invalid(m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_file_loads_and_matches_the_defaults() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let defaults = Settings::default();
        assert_eq!(loaded.coordination.keep_ms, defaults.coordination.keep_ms);
        assert_eq!(loaded.coordination.forward_events, defaults.coordination.forward_events);
    }
}
