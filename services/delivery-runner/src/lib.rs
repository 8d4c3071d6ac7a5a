//! The delivery runner (seed 001). Deliveries are created by `session.sendMessage` in the same
//! transaction as their message; this service owns their state from there.
//!
//! It claims due deliveries and hands them to harnesses on `agent.<agentId>.deliver`
//! (run.rs), stores their receipts, retries with backoff, honours deferrals, holds `manual`
//! deliveries until `delivery.flush`, and serves get/list/cancel/retry.

mod run;

use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::delivery::*;
use relay_contracts::subjects::delivery as subjects;
use relay_contracts::{ErrorCode, WireError};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;

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
    /// How long a claimed delivery is ours; a runner that dies lets it expire and it is retried.
    pub lease_ms: i64,
    pub poll_interval_ms: u64,
    /// Deliveries claimed per round.
    pub batch: i64,
    /// Attempts before a retryable failure becomes final.
    pub max_attempts: i64,
    pub backoff_base_ms: i64,
    pub backoff_max_ms: i64,
    /// How long a harness has to answer a delivery.
    pub deliver_timeout_ms: u64,
}

impl Default for RunnerSettings {
    fn default() -> Self {
        RunnerSettings {
            lease_ms: 30_000,
            poll_interval_ms: 100,
            batch: 50,
            max_attempts: 5,
            backoff_base_ms: 500,
            backoff_max_ms: 60_000,
            deliver_timeout_ms: 10_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("{0}")]
    Invalid(String),
    #[error("delivery {0} not found")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

type Result<T> = std::result::Result<T, DeliveryError>;

impl From<DeliveryError> for WireError {
    fn from(e: DeliveryError) -> Self {
        match e {
            DeliveryError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ DeliveryError::NotFound(_) => WireError::new(ErrorCode::NotFound, e.to_string()),
            DeliveryError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            DeliveryError::Db(e) if relay_bus::db::is_transient(&e) => {
                WireError::new(ErrorCode::Unavailable, "database unavailable, retry later")
            }
            DeliveryError::Db(e) => {
                tracing::error!(error = %e, "database error");
                WireError::new(ErrorCode::Internal, "internal database error")
            }
        }
    }
}

#[derive(Clone)]
pub struct Runner {
    db: PgPool,
}

impl Runner {
    /// Starts the delivery loop and returns the handler state.
    pub fn start(db: PgPool, nats: async_nats::Client, settings: RunnerSettings) -> Self {
        tokio::spawn(run::run(db.clone(), nats, settings));
        Runner { db }
    }
}

pub const SERVICE_NAME: &str = "delivery-runner";

pub async fn serve(nats: async_nats::Client, runner: Runner) -> std::result::Result<ServiceHost, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "Deliveries (delivery.* subjects)",
    )
    .await?;
    host.endpoint(subjects::GET, runner.clone(), get).await?;
    host.endpoint(subjects::LIST, runner.clone(), list).await?;
    host.endpoint(subjects::CANCEL, runner.clone(), cancel).await?;
    host.endpoint(subjects::RETRY, runner.clone(), retry).await?;
    host.endpoint(subjects::FLUSH, runner, flush).await?;
    Ok(host)
}

const COLUMNS: &str = "delivery_id, message_id, session_id, agent_id, mode, status, attempts::bigint, available_at, reason, retryable, metadata, created_at, updated_at, seq";

type Row = (
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    Option<String>,
    Option<bool>,
    Option<serde_json::Value>,
    i64,
    i64,
    i64,
);

/// A row as the contract type; the CHECK constraints guarantee the enum values.
fn to_delivery(r: Row) -> (Delivery, i64) {
    let text = |s: String| serde_json::Value::String(s);
    let delivery = Delivery {
        delivery_id: r.0,
        message_id: r.1,
        session_id: r.2,
        agent_id: r.3,
        mode: serde_json::from_value(text(r.4)).expect("mode CHECK constraint"),
        status: serde_json::from_value(text(r.5)).expect("status CHECK constraint"),
        attempts: r.6,
        available_at: r.7,
        reason: r.8,
        retryable: r.9,
        metadata: r.10,
        created_at: r.11,
        updated_at: r.12,
    };
    (delivery, r.13)
}

async fn find(db: &PgPool, id: &str) -> Result<Delivery> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM deliveries WHERE delivery_id = $1"
    )))
    .bind(id)
    .fetch_optional(db)
    .await?;
    row.map(|r| to_delivery(r).0)
        .ok_or_else(|| DeliveryError::NotFound(id.to_string()))
}

pub async fn get(runner: Runner, req: DeliveryRef) -> Result<Delivery> {
    find(&runner.db, &req.delivery_id).await
}

/// Deliveries in creation order, filtered, paged by `cursor`.
pub async fn list(runner: Runner, req: ListDeliveriesRequest) -> Result<ListDeliveriesResponse> {
    let limit = req.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(DeliveryError::Invalid("limit must be between 1 and 1000".into()));
    }
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM deliveries
         WHERE seq > $1 AND ($2::text IS NULL OR session_id = $2) AND ($3::text IS NULL OR agent_id = $3)
           AND ($4::text IS NULL OR message_id = $4) AND ($5::text IS NULL OR status = $5)
         ORDER BY seq LIMIT $6"
    )))
    .bind(req.cursor.unwrap_or(0))
    .bind(&req.session_id)
    .bind(&req.agent_id)
    .bind(&req.message_id)
    .bind(req.status.map(|s| s.as_str()))
    .bind(limit)
    .fetch_all(&runner.db)
    .await?;
    let full = rows.len() as i64 == limit;
    let (deliveries, seqs): (Vec<Delivery>, Vec<i64>) = rows.into_iter().map(to_delivery).unzip();
    let next_cursor = if full { seqs.last().copied() } else { None };
    Ok(ListDeliveriesResponse {
        deliveries,
        next_cursor,
    })
}

/// Cancels a delivery that has not reached its agent. Cancelling twice is harmless; a delivery
/// already delivered or failed cannot be cancelled.
pub async fn cancel(runner: Runner, req: CancelDeliveryRequest) -> Result<Delivery> {
    let done = sqlx::query(
        "UPDATE deliveries SET status = 'cancelled', reason = coalesce($2, 'cancelled'), lease_until = NULL, updated_at = $3
         WHERE delivery_id = $1 AND status IN ('pending', 'accepted', 'deferred')",
    )
    .bind(&req.delivery_id)
    .bind(&req.reason)
    .bind(relay_bus::now_ms())
    .execute(&runner.db)
    .await?;
    let delivery = find(&runner.db, &req.delivery_id).await?;
    if done.rows_affected() == 0 && delivery.status != DeliveryStatus::Cancelled {
        return Err(DeliveryError::Conflict(format!(
            "delivery {} is {}; only a delivery not yet delivered can be cancelled",
            req.delivery_id,
            delivery.status.as_str()
        )));
    }
    Ok(delivery)
}

/// Makes a failed (or deferred) delivery due again now, with a fresh attempt budget.
pub async fn retry(runner: Runner, req: DeliveryRef) -> Result<Delivery> {
    let done = sqlx::query(
        "UPDATE deliveries SET status = 'pending', attempts = 0, available_at = $2, lease_until = NULL, updated_at = $2
         WHERE delivery_id = $1 AND status IN ('failed', 'deferred')",
    )
    .bind(&req.delivery_id)
    .bind(relay_bus::now_ms())
    .execute(&runner.db)
    .await?;
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

/// Releases an agent's held deliveries (manual mode, or the given mode), oldest first, and
/// makes deferred ones due now.
pub async fn flush(runner: Runner, req: FlushRequest) -> Result<FlushResponse> {
    let done = sqlx::query(
        "UPDATE deliveries SET released = true, available_at = least(available_at, $3), updated_at = $3
         WHERE agent_id = $1 AND status IN ('pending', 'deferred') AND ($2::text IS NULL OR mode = $2)",
    )
    .bind(&req.agent_id)
    .bind(req.mode.map(|m| m.as_str()))
    .bind(relay_bus::now_ms())
    .execute(&runner.db)
    .await?;
    Ok(FlushResponse {
        flushed: done.rows_affected() as i64,
    })
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
    }
}
