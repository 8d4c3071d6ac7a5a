//! Bounded growth: finished deliveries (delivered, failed, cancelled) are deleted once they
//! have not changed for `runner.keep_finished_ms`, and with them the stored messages no
//! delivery needs any more. Until then `delivery.get`/`delivery.list` answer for them and a
//! failed one can be retried (`delivery.retry`); after that they are `not_found`. The event
//! log keeps their `delivery.*` events under its own retention.

use crate::Runner;
use std::time::Duration;

/// Rows one statement deletes: short transactions, however far behind the sweep is.
const BATCH: i64 = 5_000;

/// Runs forever, a quarter of the window apart (between 1 s and a minute). Any replica may.
pub async fn run(runner: Runner) {
    let keep = runner.settings.keep_finished_ms.max(0);
    let every = Duration::from_millis((keep / 4) as u64).clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let before = relay_bus::now_ms() - keep;
        match sweep(&runner, before).await {
            Ok((0, 0)) => {}
            Ok((deliveries, messages)) => {
                tracing::debug!(deliveries, messages, "deleted finished deliveries past the keep window")
            }
            Err(e) => tracing::warn!(error = %e, "cannot delete finished deliveries; will retry"),
        }
    }
}

/// Deletes finished deliveries last changed before `before`, then messages older than that
/// which no delivery refers to; returns how many of each.
async fn sweep(runner: &Runner, before: i64) -> Result<(u64, u64), sqlx::Error> {
    let mut deliveries = 0;
    loop {
        let n = sqlx::query(
            "DELETE FROM deliveries WHERE delivery_id IN (
                 SELECT delivery_id FROM deliveries
                 WHERE status IN ('delivered', 'failed', 'cancelled') AND updated_at < $1
                 ORDER BY updated_at LIMIT $2)",
        )
        .bind(before)
        .bind(BATCH)
        .execute(&runner.db)
        .await?
        .rows_affected();
        deliveries += n;
        if n < BATCH as u64 {
            break;
        }
    }
    let mut messages = 0;
    loop {
        let n = sqlx::query(
            "DELETE FROM delivery_messages WHERE message_id IN (
                 SELECT m.message_id FROM delivery_messages m
                 WHERE m.created_at < $1
                   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.message_id)
                 ORDER BY m.created_at LIMIT $2)",
        )
        .bind(before)
        .bind(BATCH)
        .execute(&runner.db)
        .await?
        .rows_affected();
        messages += n;
        if n < BATCH as u64 {
            break;
        }
    }
    Ok((deliveries, messages))
}
