//! Bounded growth of `cost_usage`: usage older than `costs.rollup_after_ms` is kept per hour,
//! session, agent, model and workspace instead of per usage event. Reports stay exact in tokens,
//! dollars and event counts (`calls`); over rolled-up usage their `since`/`until` count whole
//! hours (an hour's row is at its start).

use crate::Aggregator;
use std::time::Duration;

/// Takes at most `$2` per-event rows older than `$1` and adds them to their hour's row (made
/// when missing); the rows it took are what it deletes, so [`relay_bus::retention`] runs it
/// like any sweep. A batch may split an hour: the next one adds to it. Replicas skip each
/// other's rows.
const ROLL_UP: &str = "
WITH taken AS (
    SELECT * FROM cost_usage WHERE NOT rolled_up AND ts < $1 ORDER BY ts LIMIT $2
    FOR UPDATE SKIP LOCKED),
hourly AS (
    INSERT INTO cost_usage AS h (seq, ts, session_id, agent_id, model, workspace, input_tokens,
        output_tokens, cache_read_tokens, cache_write_tokens, other_tokens, cost_usd, calls, rolled_up)
    SELECT -min(seq), ts - ts % 3600000, session_id, agent_id, model, workspace, sum(input_tokens),
        sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens), sum(other_tokens),
        sum(cost_usd), sum(calls), true
    FROM taken GROUP BY ts - ts % 3600000, session_id, agent_id, model, workspace
    ON CONFLICT (ts, session_id, agent_id, model, workspace) WHERE rolled_up DO UPDATE SET
        input_tokens = h.input_tokens + EXCLUDED.input_tokens,
        output_tokens = h.output_tokens + EXCLUDED.output_tokens,
        cache_read_tokens = h.cache_read_tokens + EXCLUDED.cache_read_tokens,
        cache_write_tokens = h.cache_write_tokens + EXCLUDED.cache_write_tokens,
        other_tokens = h.other_tokens + EXCLUDED.other_tokens,
        cost_usd = h.cost_usd + EXCLUDED.cost_usd,
        calls = h.calls + EXCLUDED.calls)
DELETE FROM cost_usage WHERE seq IN (SELECT seq FROM taken)";

/// Rolls up in every replica, a quarter of the window apart (1 s to a minute).
pub fn start(agg: &Aggregator) {
    let keep = Duration::from_millis(agg.settings.rollup_after_ms);
    relay_bus::retention::spawn(&agg.db, "usage rolled up by the hour", keep, vec![ROLL_UP.into()]);
}
