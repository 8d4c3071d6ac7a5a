//! Bounded growth: finished deliveries (delivered, failed, cancelled) are deleted once they
//! have not changed for `runner.keep_finished_ms`, and with them the stored messages no
//! delivery needs any more. Until then `delivery.get`/`delivery.list` answer for them and a
//! failed one can be retried (`delivery.retry`); after that they are `not_found`. The event
//! log keeps their `delivery.*` events under its own retention. Run by [`relay_bus::retention`].

use crate::Runner;
use std::time::Duration;

/// The conditions are repeated outside the subquery: a row that `delivery.retry` sets pending
/// while this runs is re-checked against them (READ COMMITTED re-checks only the outer WHERE).
const FINISHED: &str = "DELETE FROM deliveries WHERE delivery_id IN (
    SELECT delivery_id FROM deliveries
    WHERE status IN ('delivered', 'failed', 'cancelled') AND updated_at < $1
    ORDER BY updated_at LIMIT $2)
  AND status IN ('delivered', 'failed', 'cancelled') AND updated_at < $1";

/// After the deliveries, so a message whose last delivery just went goes in the same round.
const UNREFERENCED_MESSAGES: &str = "DELETE FROM delivery_messages WHERE message_id IN (
    SELECT m.message_id FROM delivery_messages m
    WHERE m.created_at < $1
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.message_id)
    ORDER BY m.created_at LIMIT $2)";

pub fn start(runner: &Runner) {
    let keep = Duration::from_millis(runner.settings.keep_finished_ms.max(0) as u64);
    let statements = vec![FINISHED.to_string(), UNREFERENCED_MESSAGES.to_string()];
    relay_bus::retention::spawn(&runner.db, "finished deliveries", keep, statements);
}
