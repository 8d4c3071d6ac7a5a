//! The delivery runner (seed 001). Deliveries are created by `session.sendMessage` in the same
//! transaction as their message; this service owns their state from there.
//!
//! - run.rs: claims agents with due work (a lease, `FOR UPDATE SKIP LOCKED`) and walks each
//!   one's deliveries in order: capability check, boundary and hold rules, hand-over to the
//!   harness on `agent.<agentId>.deliver`.
//! - settle.rs: receipts become delivery states and events, group-committed.
//! - boundary.rs: follows the event log for status and tool-call boundaries.
//! - liveness.rs: which runners are alive (a lock per runner); a dead one's agents are freed
//!   for the others in seconds.
//! - retention.rs: deletes finished deliveries after `keep_finished_ms` (bounded growth).
//! - control.rs: agent pause/resume/stop/input.
//! - fault.rs: `RELAY_RUNNER_CRASH_AT`, the hand-off tests' kill -9 at a chosen step.
//! - store.rs: the handlers' SQL on `deliveries` (rows, lookups, wake-ups); error.rs: the error.
//! - This file: settings and the `delivery.*` handlers.

mod boundary;
mod control;
mod error;
mod fault;
mod handoff;
mod liveness;
mod retention;
mod run;
mod settle;
mod store;

pub use error::DeliveryError;
use error::Result;
use store::{COLUMNS, DeliveryRow, find, find_in, wake_agent, wake_runners};

use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use relay_contracts::rpc;
use relay_contracts::session::AgentStatus;
use relay_contracts::{RequestContext, WireError};
use serde::{Deserialize, Serialize};
use settle::{Outcome, Settler};
use sqlx::PgPool;
use std::sync::Arc;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub runner: RunnerSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RunnerSettings {
    /// How long a claimed agent is ours; a runner that dies lets it expire and another takes over.
    pub lease_ms: i64,
    /// Fallback when no wake-up arrives (new deliveries, flush and resume wake the runners).
    pub poll_interval_ms: u64,
    /// Deliveries walked per agent per round.
    pub batch: i64,
    /// Agents one runner works on at once.
    pub max_agents: i64,
    /// How long a walker keeps an agent's lease after its last delivery, waiting for the next
    /// message (which then skips the claim); released at once when other agents wait.
    pub linger_ms: u64,
    /// Attempts before a retryable failure becomes final.
    pub max_attempts: i64,
    pub backoff_base_ms: i64,
    pub backoff_max_ms: i64,
    /// How long a harness has to answer a delivery.
    pub deliver_timeout_ms: u64,
    /// An `accepted` delivery never reported on is handed over again after this long (the
    /// harness may have restarted and lost its queue; the delivery id makes it harmless).
    pub accept_timeout_ms: i64,
    /// Agent statuses in which `on-idle` deliveries go out (seed 000: idle, waiting, blocked).
    pub safe_states: Vec<AgentStatus>,
    /// Append delivery events to the event log (outbox forwarder); false only for a runner alone.
    pub forward_events: bool,
    /// How long a finished delivery (delivered, failed, cancelled) stays after its last change:
    /// readable with delivery.get/list and, when failed, retryable. Then it is deleted.
    pub keep_finished_ms: i64,
    /// Follow the event log for status and tool-call boundaries (needs event-ingest).
    pub follow_events: bool,
}

impl Default for RunnerSettings {
    fn default() -> Self {
        RunnerSettings {
            lease_ms: 30_000,
            poll_interval_ms: 500,
            batch: 50,
            max_agents: 256,
            linger_ms: 1000,
            max_attempts: 5,
            backoff_base_ms: 500,
            backoff_max_ms: 60_000,
            deliver_timeout_ms: 10_000,
            accept_timeout_ms: 600_000,
            safe_states: vec![AgentStatus::Idle, AgentStatus::Waiting, AgentStatus::Blocked],
            forward_events: true,
            follow_events: true,
            keep_finished_ms: 7 * 24 * 3_600_000,
        }
    }
}

/// Handler state, shared with the delivery loop.
#[derive(Clone)]
pub struct Runner {
    db: PgPool,
    nats: async_nats::Client,
    settings: Arc<RunnerSettings>,
    settler: Settler,
    /// Pokes the event forwarder after a commit that wrote `delivery_events`.
    forward_wake: Arc<tokio::sync::Notify>,
    drain: Arc<Drain>,
}

/// Shutdown of the delivery loop: once `requested`, no agent is claimed and each walker hands
/// its agent back after the batch in hand; `done` once every walker has.
#[derive(Default)]
struct Drain {
    requested: tokio::sync::watch::Sender<bool>,
    done: tokio::sync::watch::Sender<bool>,
}

impl Runner {
    /// Starts the delivery loop, the settler, the boundary follower, the event forwarder and the
    /// retention sweep.
    pub async fn start(db: PgPool, nats: async_nats::Client, settings: RunnerSettings) -> Self {
        let settings = Arc::new(settings);
        let forward_wake = relay_bus::outbox::start(OUTBOX, &db, &nats, settings.forward_events);
        let settler = Settler::start(db.clone(), nats.clone(), forward_wake.clone());
        let runner = Runner {
            db,
            nats,
            settings,
            settler,
            forward_wake,
            drain: Arc::default(),
        };
        if runner.settings.follow_events {
            tokio::spawn(boundary::run(runner.db.clone(), runner.nats.clone()));
        }
        tokio::spawn(run::run(runner.clone()));
        retention::start(&runner);
        runner
    }
}

impl Runner {
    /// Stops taking agents and waits until every agent this runner walked is handed back
    /// (SIGTERM): another replica takes them over at once instead of after `lease_ms`.
    pub async fn drain(self) {
        self.drain.requested.send_replace(true);
        let _ = self.drain.done.subscribe().wait_for(|done| *done).await;
    }

    fn draining(&self) -> tokio::sync::watch::Receiver<bool> {
        self.drain.requested.subscribe()
    }

    fn shutting_down(&self) -> bool {
        *self.drain.requested.borrow()
    }
}

/// `delivery_events` rows are already typed `delivery.<kind>`.
const OUTBOX: relay_bus::outbox::Outbox = relay_bus::outbox::Outbox {
    table: "delivery_events",
    type_prefix: "",
    verbatim: &[],
    lock_key: 0x7265_6c61_7964_6c76, // "relaydlv"
    prune: true,
};

pub const SERVICE_NAME: &str = "delivery-runner";

use relay_bus::scope::scoped;

pub async fn serve(nats: async_nats::Client, runner: Runner) -> std::result::Result<ServiceHost<Runner>, ServiceError> {
    // SIGTERM: hand the agents back for another replica (the future runs only then).
    let drain = runner.clone().drain();
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Deliveries and agent control (delivery.*, agent.pause|resume|stop|input)",
        runner,
    )
    .await?;
    host.on_shutdown(drain);
    host.serve::<rpc::DeliveryGet>(get).await?;
    host.serve::<rpc::DeliveryList>(list).await?;
    host.serve::<rpc::DeliveryCancel>(scoped(cancel)).await?;
    host.serve::<rpc::DeliveryRetry>(scoped(retry)).await?;
    host.serve::<rpc::DeliveryFlush>(scoped(flush)).await?;
    host.serve::<rpc::DeliveryReport>(report).await?;
    host.serve::<rpc::DeliveryHandoff>(handoff::handoff).await?;
    host.serve::<rpc::DeliveryPurge>(handoff::purge).await?;
    host.serve::<rpc::AgentPause>(scoped(control::pause)).await?;
    host.serve::<rpc::AgentResume>(scoped(control::resume)).await?;
    host.serve::<rpc::AgentStop>(scoped(control::stop)).await?;
    host.serve::<rpc::AgentInput>(scoped(control::input)).await?;
    host.serve::<rpc::AgentInterrupt>(scoped(control::interrupt)).await?;
    Ok(host)
}

/// A caller confined to a workspace sees its deliveries and agents only (`scoped` handlers).
impl relay_bus::scope::Scope for Runner {
    async fn workspace_of(&self, field: &str, id: &str) -> std::result::Result<Option<String>, WireError> {
        let sql = match field {
            "deliveryId" => "SELECT workspace FROM deliveries WHERE delivery_id = $1",
            "agentId" => "SELECT workspace FROM deliveries WHERE agent_id = $1 LIMIT 1",
            "sessionId" => "SELECT workspace FROM delivery_messages WHERE session_id = $1 LIMIT 1",
            _ => return Ok(None),
        };
        sqlx::query_scalar(sql)
            .bind(id)
            .fetch_optional(&self.db)
            .await
            .map_err(|e| WireError::from(DeliveryError::Db(e)))
    }
}

/// Scoped in its one statement (`find_in`), not by `scoped`: a harness reads and reports on
/// every delivery, so each saves a round trip.
pub async fn get(runner: Runner, ctx: RequestContext, req: DeliveryRef) -> Result<Delivery> {
    find_in(&runner.db, &req.delivery_id, ctx.scope()).await
}

/// Deliveries in creation order, filtered, paged by `cursor`.
pub async fn list(runner: Runner, ctx: RequestContext, req: ListDeliveriesRequest) -> Result<ListDeliveriesResponse> {
    let limit = req.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(DeliveryError::Invalid("limit must be between 1 and 1000".into()));
    }
    let rows: Vec<DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM deliveries
         WHERE seq > $1 AND ($2::text IS NULL OR session_id = $2) AND ($3::text IS NULL OR agent_id = $3)
           AND ($4::text IS NULL OR message_id = $4) AND ($5::text IS NULL OR status = $5)
           AND ($7::text IS NULL OR workspace = $7)
         ORDER BY seq LIMIT $6"
    )))
    .bind(req.cursor.unwrap_or(0))
    .bind(&req.session_id)
    .bind(&req.agent_id)
    .bind(&req.message_id)
    .bind(req.status.map(relay_contracts::delivery::DeliveryStatus::as_str))
    .bind(limit)
    .bind(ctx.scope())
    .fetch_all(&runner.db)
    .await?;
    let full = rows.len() as i64 == limit;
    let next_cursor = if full { rows.last().map(|r| r.seq) } else { None };
    let deliveries = rows.into_iter().map(Delivery::from).collect();
    Ok(ListDeliveriesResponse {
        deliveries,
        next_cursor,
    })
}

/// Cancels a delivery that has not reached its agent, with a `delivery.cancelled` event.
/// Cancelling twice is harmless; a delivery already delivered or failed cannot be cancelled.
pub async fn cancel(runner: Runner, _ctx: RequestContext, req: CancelDeliveryRequest) -> Result<Delivery> {
    let reason = req.reason.unwrap_or_else(|| "cancelled".into());
    // Accepted or deferred: the harness may hold it for its boundary; it drops it first.
    let held = find(&runner.db, &req.delivery_id).await?;
    if matches!(held.status, DeliveryStatus::Accepted | DeliveryStatus::Deferred) {
        let ask = CancelHeld {
            delivery_id: req.delivery_id.clone(),
            reason: Some(reason.clone()),
        };
        let subject = rpc::agent::cancel(&held.agent_id);
        let answer: std::result::Result<HeldCancelled, _> =
            relay_bus::client::request(&runner.nats, &subject, &ask, std::time::Duration::from_secs(5)).await;
        match answer {
            // Accepted and not held: the harness typed it already (its report is on the way).
            // The agent has the message; calling it cancelled would be a lie.
            Ok(a) if !a.removed && held.status == DeliveryStatus::Accepted => {
                return Err(DeliveryError::Conflict(format!(
                    "delivery {} was already handed to the agent; only a delivery not yet delivered can be cancelled",
                    req.delivery_id
                )));
            }
            Ok(a) => {
                tracing::info!(delivery_id = %req.delivery_id, removed = a.removed, "harness asked to drop the delivery")
            }
            // A harness that is gone holds nothing; the delivery is cancelled all the same.
            Err(e) => tracing::info!(delivery_id = %req.delivery_id, error = %e, "harness not reached for the cancel"),
        }
    }
    let cancelled = control::cancel_where(&runner, "delivery_id = $1", &req.delivery_id, &reason).await?;
    let delivery = find(&runner.db, &req.delivery_id).await?;
    if cancelled == 0 && delivery.status != DeliveryStatus::Cancelled {
        return Err(DeliveryError::Conflict(format!(
            "delivery {} is {}; only a delivery not yet delivered can be cancelled",
            req.delivery_id,
            delivery.status.as_str()
        )));
    }
    Ok(delivery)
}

/// Makes a failed (or deferred) delivery due again now, with a fresh attempt budget.
pub async fn retry(runner: Runner, _ctx: RequestContext, req: DeliveryRef) -> Result<Delivery> {
    let mut tx = runner.db.begin().await?;
    let done = sqlx::query(
        "UPDATE deliveries SET status = 'pending', attempts = 0, available_at = $2, updated_at = $2
         WHERE delivery_id = $1 AND status IN ('failed', 'deferred')",
    )
    .bind(&req.delivery_id)
    .bind(relay_bus::now_ms())
    .execute(&mut *tx)
    .await?;
    wake_runners(&mut *tx).await?;
    tx.commit().await?;
    let delivery = find(&runner.db, &req.delivery_id).await?;
    if done.rows_affected() == 0 {
        return Err(DeliveryError::Conflict(format!(
            "delivery {} is {}; only a failed or deferred delivery can be retried",
            req.delivery_id,
            delivery.status.as_str()
        )));
    }
    Ok(delivery)
}

/// Releases an agent's held deliveries (all modes, or the given one) in order, and makes
/// deferred ones due now.
pub async fn flush(runner: Runner, _ctx: RequestContext, req: FlushRequest) -> Result<FlushResponse> {
    // Like pause, resume and stop: an agent nobody knows is `not_found`, not `{"flushed": 0}`.
    control::known_agent(&runner, &req.agent_id).await?;
    let mut tx = runner.db.begin().await?;
    let done = sqlx::query(
        "UPDATE deliveries SET released = true, available_at = least(available_at, $3), updated_at = $3
         WHERE agent_id = $1 AND status IN ('pending', 'deferred') AND ($2::text IS NULL OR mode = $2)",
    )
    .bind(&req.agent_id)
    .bind(req.mode.map(DeliveryMode::as_str))
    .bind(relay_bus::now_ms())
    .execute(&mut *tx)
    .await?;
    wake_agent(&mut *tx, &req.agent_id).await?;
    tx.commit().await?;
    Ok(FlushResponse {
        flushed: done.rows_affected() as i64,
    })
}

/// A harness reports what became of a delivery it accepted (`delivery.queue`).
pub async fn report(runner: Runner, ctx: RequestContext, req: Receipt) -> Result<Delivery> {
    let Some(id) = req.delivery_id.clone() else {
        return Err(DeliveryError::Invalid("delivery.report needs the deliveryId".into()));
    };
    let delivery = find_in(&runner.db, &id, ctx.scope()).await?;
    // A harness reports on its own agent's deliveries; another's do not exist for it.
    if let Some(own) = &ctx.agent
        && delivery.agent_id != *own
    {
        return Err(DeliveryError::NotFound(format!("delivery {id}")));
    }
    // A harness reports only what it was handed, so a delivery not yet recorded as handed
    // over was handed by a walker that has not stored its receipt: one still walking (the
    // report overtook it) or one killed before it could (kill -9). Either way the hand-off
    // happened: it is recorded here, `accepted` then the report, so it is never refused for
    // good. The walker's own `accepted`, if it comes, then changes nothing.
    let unrecorded = delivery.status == DeliveryStatus::Pending && delivery.attempts == 0;
    if delivery.status.is_final() {
        // A repeated report of the same outcome is harmless; a different one is a conflict.
        let same = delivery.status.as_str() == req.status.as_str();
        if same {
            return Ok(delivery);
        }
        return Err(DeliveryError::Conflict(format!(
            "delivery {id} is already {}",
            delivery.status.as_str()
        )));
    }
    fault::point("reported");
    let key = delivery_ref(&delivery);
    let mut outcomes = Vec::with_capacity(2);
    if unrecorded && req.status != ReceiptStatus::Accepted {
        let handed = Receipt {
            status: ReceiptStatus::Accepted,
            delivery_id: Some(id.clone()),
            available_at: None,
            reason: None,
            retryable: None,
            metadata: None,
        };
        outcomes.push(Outcome::from_receipt(&key, handed, &runner.settings));
    }
    outcomes.push(Outcome::from_receipt(&key, req, &runner.settings));
    // As stored; re-read only when a cancel or another report got there first.
    match runner.settler.settle(outcomes).await?.pop() {
        Some(changed) => Ok(changed),
        None => find(&runner.db, &id).await,
    }
}

fn delivery_ref(d: &Delivery) -> store::DeliveryKey {
    store::DeliveryKey {
        delivery_id: d.delivery_id.clone(),
        message_id: d.message_id.clone(),
        session_id: d.session_id.clone(),
        agent_id: d.agent_id.clone(),
        mode: d.mode,
        attempts: d.attempts.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_file_loads_with_the_default_runner_settings() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let d = RunnerSettings::default();
        assert_eq!(
            (loaded.runner.lease_ms, loaded.runner.max_attempts),
            (d.lease_ms, d.max_attempts)
        );
        assert_eq!(loaded.runner.deliver_timeout_ms, d.deliver_timeout_ms);
        assert_eq!(loaded.runner.safe_states, d.safe_states);
        assert_eq!(loaded.runner.max_agents, d.max_agents);
    }
}
