//! SQL of `deliveries` read by the handlers, and the wake-ups. (The walk's statements are in
//! run.rs and settle.rs, next to the logic they serve.)

use crate::error::{DeliveryError, Result};
use relay_bus::db::TextEnum;
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use sqlx::PgPool;

pub const COLUMNS: &str = "delivery_id, message_id, session_id, agent_id, mode, status, attempts::bigint AS attempts, available_at, reason, retryable, metadata, created_at, updated_at, seq, traceparent";

/// A `deliveries` row as selected by [`COLUMNS`].
#[derive(sqlx::FromRow)]
pub struct DeliveryRow {
    pub delivery_id: String,
    message_id: String,
    session_id: String,
    agent_id: String,
    mode: TextEnum<DeliveryMode>,
    status: TextEnum<DeliveryStatus>,
    attempts: i64,
    available_at: i64,
    reason: Option<String>,
    retryable: Option<bool>,
    metadata: Option<serde_json::Value>,
    created_at: i64,
    updated_at: i64,
    pub seq: i64,
    /// The context of the request that sent the message: its events join that trace.
    pub traceparent: Option<String>,
}

impl From<DeliveryRow> for Delivery {
    fn from(r: DeliveryRow) -> Self {
        Delivery {
            delivery_id: r.delivery_id,
            message_id: r.message_id,
            session_id: r.session_id,
            agent_id: r.agent_id,
            mode: r.mode.0,
            status: r.status.0,
            attempts: r.attempts,
            available_at: r.available_at,
            reason: r.reason,
            retryable: r.retryable,
            metadata: r.metadata,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

pub async fn find(db: &PgPool, id: &str) -> Result<Delivery> {
    find_in(db, id, None).await
}

/// The delivery, when it is in `scope` (a caller confined to a workspace): `not_found` for one
/// of another workspace, as for one that never existed, with the one statement.
pub async fn find_in(db: &PgPool, id: &str, scope: Option<&str>) -> Result<Delivery> {
    let row: Option<DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM deliveries WHERE delivery_id = $1 AND ($2::text IS NULL OR workspace = $2)"
    )))
    .bind(id)
    .bind(scope)
    .fetch_optional(db)
    .await?;
    row.map(Delivery::from)
        .ok_or_else(|| DeliveryError::NotFound(format!("delivery {id}")))
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    delivery_id: String,
    message_id: String,
    session_id: String,
    agent_id: String,
    mode: TextEnum<DeliveryMode>,
    attempts: i32,
}

/// Keys of the deliveries matching `filter` (SQL on `deliveries`, `$1` bound to `arg`), in order.
pub async fn keys_where(db: &PgPool, filter: &str, arg: &str) -> Result<Vec<DeliveryKey>> {
    let keys: Vec<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT delivery_id, message_id, session_id, agent_id, mode, attempts FROM deliveries
         WHERE {filter} ORDER BY seq"
    )))
    .bind(arg)
    .fetch_all(db)
    .await?;
    Ok(keys
        .into_iter()
        .map(|k| DeliveryKey {
            delivery_id: k.delivery_id,
            message_id: k.message_id,
            session_id: k.session_id,
            agent_id: k.agent_id,
            mode: k.mode.0,
            attempts: k.attempts as i64,
        })
        .collect())
}

/// Wakes every runner replica (at commit, when run inside a transaction).
pub async fn wake_runners<'e, E: sqlx::PgExecutor<'e>>(db: E) -> std::result::Result<(), sqlx::Error> {
    wake_agent(db, "").await
}

/// Wakes the walkers of `agents` at commit: each NOTIFY names its agent, so the runner walking
/// it (if any) hears it directly.
pub async fn wake_agents<'e, E: sqlx::PgExecutor<'e>>(
    db: E,
    agents: &[String],
) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, a) FROM unnest($2::text[]) AS a")
        .bind(WAKE_CHANNEL)
        .bind(agents)
        .execute(db)
        .await?;
    Ok(())
}

/// Wakes the walker of `agent_id` (or the claim loops when no runner walks it); "" wakes all.
pub async fn wake_agent<'e, E: sqlx::PgExecutor<'e>>(db: E, agent_id: &str) -> std::result::Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(WAKE_CHANNEL)
        .bind(agent_id)
        .execute(db)
        .await?;
    Ok(())
}

/// Which delivery an outcome is about, and which attempt produced it.
#[derive(Debug, Clone)]
pub struct DeliveryKey {
    pub delivery_id: String,
    pub message_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub mode: DeliveryMode,
    pub attempts: i64,
}
