//! The delivery loop: claim due deliveries, hand each to its agent's harness, persist the
//! receipt.
//!
//! Claims use `FOR UPDATE SKIP LOCKED` (replicas share the work) and a lease: a runner killed
//! mid-delivery leaves a lease that expires, and another runner retries. The delivery id goes
//! to the harness as the context id, so a retried delivery is recognised there. Per agent,
//! a delivery waits while an earlier one is still pending or deferred (order is kept).

use crate::RunnerSettings;
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::delivery::*;
use relay_contracts::session::Message;
use sqlx::PgPool;
use sqlx::types::Json;
use std::time::Duration;

struct Claimed {
    delivery_id: String,
    agent_id: String,
    mode: DeliveryMode,
    attempts: i64,
    message: Message,
}

pub async fn run(db: PgPool, nats: async_nats::Client, settings: RunnerSettings) {
    loop {
        match claim(&db, &settings).await {
            Ok(batch) if !batch.is_empty() => {
                for d in batch {
                    let receipt = deliver(&nats, &d, &settings).await;
                    if let Err(e) = settle(&db, &d, receipt, &settings).await {
                        tracing::warn!(delivery_id = %d.delivery_id, error = %e, "receipt not stored; the lease will expire and it is retried");
                    }
                }
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(settings.poll_interval_ms)).await,
            Err(e) => {
                tracing::warn!(error = %e, "cannot claim deliveries");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

type ClaimRow = (String, String, String, i32, Json<Message>);

async fn claim(db: &PgPool, s: &RunnerSettings) -> Result<Vec<Claimed>, sqlx::Error> {
    let now = relay_bus::now_ms();
    let rows: Vec<ClaimRow> = sqlx::query_as(
        "WITH due AS (
             SELECT c.delivery_id FROM deliveries c
             WHERE c.status IN ('pending', 'deferred') AND c.available_at <= $1
               AND (c.lease_until IS NULL OR c.lease_until < $1)
               AND (c.mode <> 'manual' OR c.released)
               AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.agent_id = c.agent_id AND e.seq < c.seq
                               AND e.status IN ('pending', 'deferred'))
             ORDER BY c.seq LIMIT $2 FOR UPDATE SKIP LOCKED)
         UPDATE deliveries d SET lease_until = $1 + $3, attempts = d.attempts + 1, updated_at = $1
         FROM due, registry_messages m
         WHERE d.delivery_id = due.delivery_id AND m.message_id = d.message_id
         RETURNING d.delivery_id, d.agent_id, d.mode, d.attempts, m.doc",
    )
    .bind(now)
    .bind(s.batch)
    .bind(s.lease_ms)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(delivery_id, agent_id, mode, attempts, Json(message))| Claimed {
            delivery_id,
            agent_id,
            mode: serde_json::from_value(serde_json::Value::String(mode)).unwrap_or(DeliveryMode::Immediate),
            attempts: attempts as i64,
            message,
        })
        .collect())
}

/// A harness that cannot be reached gives a retryable failure, never a silent drop.
async fn deliver(nats: &async_nats::Client, d: &Claimed, s: &RunnerSettings) -> Receipt {
    let req = DeliverRequest {
        context: MessageContext {
            id: d.delivery_id.clone(),
            mode: d.mode,
            reason: "message".into(),
            priority: None,
            deadline: None,
            idempotency_key: Some(d.delivery_id.clone()),
            metadata: None,
        },
        message: d.message.clone(),
    };
    let timeout = Duration::from_millis(s.deliver_timeout_ms);
    match relay_bus::client::request::<_, Receipt>(nats, &deliver_subject(&d.agent_id), &req, timeout).await {
        Ok(r) => r,
        Err(e) => Receipt {
            status: ReceiptStatus::Failed,
            delivery_id: Some(d.delivery_id.clone()),
            available_at: None,
            reason: Some(e.to_string()),
            retryable: Some(e.error.retryable),
            metadata: None,
        },
    }
}

/// Exponential backoff with jitter: base · 2^(attempt-1), capped, ±25 %.
fn backoff_ms(attempt: i64, s: &RunnerSettings) -> i64 {
    let exp = s
        .backoff_base_ms
        .saturating_mul(1 << (attempt - 1).clamp(0, 20))
        .min(s.backoff_max_ms);
    let jitter = (relay_bus::now_ms() % 1000) as f64 / 1000.0 * 0.5 - 0.25;
    (exp as f64 * (1.0 + jitter)) as i64
}

fn parse_ms(v: &serde_json::Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// Stores the receipt unless the delivery was cancelled meanwhile.
async fn settle(db: &PgPool, d: &Claimed, r: Receipt, s: &RunnerSettings) -> Result<(), sqlx::Error> {
    let now = relay_bus::now_ms();
    let (status, available_at, retryable) = match r.status {
        ReceiptStatus::Accepted => (DeliveryStatus::Accepted, now, r.retryable),
        ReceiptStatus::Delivered => (DeliveryStatus::Delivered, now, None),
        ReceiptStatus::Deferred => {
            let at = r
                .available_at
                .as_ref()
                .and_then(parse_ms)
                .unwrap_or(now + s.backoff_base_ms);
            (DeliveryStatus::Deferred, at, None)
        }
        ReceiptStatus::Failed if r.retryable == Some(true) && d.attempts < s.max_attempts => {
            (DeliveryStatus::Pending, now + backoff_ms(d.attempts, s), Some(true))
        }
        ReceiptStatus::Failed => (DeliveryStatus::Failed, now, r.retryable),
    };
    tracing::info!(delivery_id = %d.delivery_id, status = status.as_str(), attempt = d.attempts, "receipt");
    sqlx::query(
        "UPDATE deliveries SET status = $2, available_at = $3, reason = $4, retryable = $5, metadata = $6,
             lease_until = NULL, updated_at = $7
         WHERE delivery_id = $1 AND status <> 'cancelled'",
    )
    .bind(&d.delivery_id)
    .bind(status.as_str())
    .bind(available_at)
    .bind(&r.reason)
    .bind(retryable)
    .bind(&r.metadata)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}
