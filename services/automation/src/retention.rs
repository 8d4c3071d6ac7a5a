//! Bounded growth: a webhook's finished deliveries (delivered, failed) are deleted after
//! `webhooks.keep_deliveries_ms`, and a schedule's runs after `schedules.keep_runs_ms`, always
//! keeping its latest run (`schedule.get` shows it). Until then `webhook.deliveries` lists them
//! and `webhook.replay` can post a failed one again; `schedule.runs` lists the runs. A run's
//! count (`runs`) is kept on the schedule and does not shrink.

use crate::Automation;
use std::time::Duration;

/// Rows one statement deletes: short transactions, however far behind the sweep is.
const BATCH: i64 = 5_000;

/// Runs forever, a quarter of the shorter window apart (between 1 s and a minute).
pub async fn run(a: Automation) {
    let (deliveries, runs) = (a.webhooks.keep_deliveries_ms.max(0), a.schedules.keep_runs_ms.max(0));
    let every =
        Duration::from_millis((deliveries.min(runs) / 4) as u64).clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let now = relay_bus::now_ms();
        for (what, sql, before) in [
            (
                "webhook deliveries",
                "DELETE FROM webhook_deliveries WHERE delivery_id IN (
                     SELECT delivery_id FROM webhook_deliveries
                     WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)",
                now - deliveries,
            ),
            (
                "schedule runs",
                "DELETE FROM schedule_runs WHERE (schedule_id, due_at) IN (
                     SELECT r.schedule_id, r.due_at FROM schedule_runs r
                     WHERE r.fired_at < $1
                       AND EXISTS (SELECT 1 FROM schedule_runs n WHERE n.schedule_id = r.schedule_id AND n.due_at > r.due_at)
                     ORDER BY r.fired_at LIMIT $2)",
                now - runs,
            ),
        ] {
            if let Err(e) = sweep(&a, sql, before).await {
                tracing::warn!(error = %e, "cannot delete old {what}; will retry");
            }
        }
    }
}

async fn sweep(a: &Automation, sql: &'static str, before: i64) -> Result<(), sqlx::Error> {
    loop {
        let n = sqlx::query(sql)
            .bind(before)
            .bind(BATCH)
            .execute(&a.db)
            .await?
            .rows_affected();
        if n < BATCH as u64 {
            return Ok(());
        }
    }
}
