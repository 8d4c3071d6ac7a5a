//! Bounded growth of `cost_usage`: usage older than `costs.rollup_after_ms` is kept per hour,
//! session, agent, model and workspace instead of per usage event. Reports stay exact in tokens,
//! dollars and event counts (`calls`); over rolled-up usage their `since`/`until` count whole
//! hours (an hour's row is at its start).

use crate::Aggregator;
use relay_bus::retention::BATCH;
use std::time::Duration;

const HOUR_MS: i64 = 3_600_000;

/// Takes at most `$2` per-event rows older than `$1`, adds them to their hour's row (made when
/// missing); returns how many it took. A batch may split an hour: the next one adds to it.
const ROLL_UP: &str = "
WITH gone AS (
    DELETE FROM cost_usage WHERE seq IN (
        SELECT seq FROM cost_usage WHERE NOT rolled_up AND ts < $1 ORDER BY ts LIMIT $2)
    RETURNING *),
hourly AS (
    INSERT INTO cost_usage AS h (seq, ts, session_id, agent_id, model, workspace, input_tokens,
        output_tokens, cache_read_tokens, cache_write_tokens, other_tokens, cost_usd, calls, rolled_up)
    SELECT -min(seq), ts - ts % $3, session_id, agent_id, model, workspace, sum(input_tokens),
        sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens), sum(other_tokens),
        sum(cost_usd), sum(calls), true
    FROM gone GROUP BY ts - ts % $3, session_id, agent_id, model, workspace
    ON CONFLICT (ts, session_id, agent_id, model, workspace) WHERE rolled_up DO UPDATE SET
        input_tokens = h.input_tokens + EXCLUDED.input_tokens,
        output_tokens = h.output_tokens + EXCLUDED.output_tokens,
        cache_read_tokens = h.cache_read_tokens + EXCLUDED.cache_read_tokens,
        cache_write_tokens = h.cache_write_tokens + EXCLUDED.cache_write_tokens,
        other_tokens = h.other_tokens + EXCLUDED.other_tokens,
        cost_usd = h.cost_usd + EXCLUDED.cost_usd,
        calls = h.calls + EXCLUDED.calls)
SELECT count(*) FROM gone";

/// Rolls up forever, a quarter of the window apart (1 s to a minute); every replica may run it
/// (a row is taken by one statement: the other's `DELETE` finds it gone).
pub async fn run(agg: Aggregator) {
    let keep = Duration::from_millis(agg.settings.rollup_after_ms);
    let every = (keep / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        let before = relay_bus::now_ms() - keep.as_millis() as i64;
        let mut taken = 0;
        loop {
            let done: Result<i64, _> = sqlx::query_scalar(ROLL_UP)
                .bind(before)
                .bind(BATCH)
                .bind(HOUR_MS)
                .fetch_one(&agg.db)
                .await;
            match done {
                Ok(n) => {
                    taken += n;
                    if n < BATCH {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot roll up old usage yet; will retry");
                    break;
                }
            }
        }
        if taken > 0 {
            tracing::debug!(taken, "rolled up usage rows into hourly rows");
        }
    }
}
