//! Bounded growth: a webhook's finished deliveries (delivered, failed) are deleted after
//! `webhooks.keep_deliveries_ms`, and a schedule's runs after `schedules.keep_runs_ms`, always
//! keeping its latest run (`schedule.get` shows it). Until then `webhook.deliveries` lists them
//! and `webhook.replay` can post a failed one again; `schedule.runs` lists the runs. A run's
//! count (`runs`) is kept on the schedule and does not shrink. Run by [`relay_bus::retention`].

use crate::Automation;
use std::time::Duration;

/// The outer conditions are re-checked on a row `webhook.replay` changes while this runs
/// (READ COMMITTED re-checks only the outer WHERE), and keep a replayed delivery for a whole
/// window after its last attempt.
const FINISHED_DELIVERIES: &str = "DELETE FROM webhook_deliveries WHERE delivery_id IN (
    SELECT delivery_id FROM webhook_deliveries
    WHERE status <> 'pending' AND created_at < $1 ORDER BY created_at LIMIT $2)
  AND status <> 'pending' AND COALESCE(delivered_at, next_attempt_at) < $1";

const OLD_RUNS: &str = "DELETE FROM schedule_runs WHERE (schedule_id, due_at) IN (
    SELECT r.schedule_id, r.due_at FROM schedule_runs r
    WHERE r.fired_at < $1
      AND EXISTS (SELECT 1 FROM schedule_runs n WHERE n.schedule_id = r.schedule_id AND n.due_at > r.due_at)
    ORDER BY r.fired_at LIMIT $2)";

pub fn start(a: &Automation) {
    let ms = |keep: i64| Duration::from_millis(keep.max(0) as u64);
    let (deliveries, runs) = (ms(a.webhooks.keep_deliveries_ms), ms(a.schedules.keep_runs_ms));
    relay_bus::retention::spawn(
        &a.db,
        "webhook deliveries",
        deliveries,
        vec![FINISHED_DELIVERIES.into()],
    );
    relay_bus::retention::spawn(&a.db, "schedule runs", runs, vec![OLD_RUNS.into()]);
}
