//! `make bench`: usage events folded into cost totals per second, beside the event log's append
//! rate measured in the same run. Prints a table and writes bench/results/costs.json.
//!
//! Real, release-built event-ingest and cost-aggregator on a private nats-server and a fresh
//! database.
//! - append (baseline): N `tokens.used` events appended by 4 concurrent callers in batches of
//!   1,000, with the aggregator stopped;
//! - catch-up fold: the aggregator started on that backlog, until every event is folded;
//! - live: N more appended while the aggregator runs, until the last one is folded (the fold
//!   then competes with the appends for the same two cores).
//!
//! RELAY_BENCH_EVENTS sets N (default 100,000).

use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const AGGREGATOR: &str = env!("CARGO_BIN_EXE_cost-aggregator");
const CALLERS: usize = 4;
const BATCH: usize = 1_000;

fn batch(round: usize) -> Value {
    let models = ["claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "claude-haiku-4-5"];
    let events: Vec<Value> = (0..BATCH)
        .map(|i| {
            json!({"type": "tokens.used", "sessionId": format!("s{}", i % 50), "agentId": format!("a{}", i % 10),
                   "payload": {"inputTokens": 1_000 + i, "outputTokens": 200 + round, "model": models[i % 4]}})
        })
        .collect();
    json!({ "events": events })
}

/// Appends `n` events (rounded down to whole batches); seconds taken.
async fn append(client: &async_nats::Client, n: usize) -> f64 {
    let start = Instant::now();
    let rounds = n / BATCH;
    let workers: Vec<_> = (0..CALLERS)
        .map(|w| {
            let client = client.clone();
            tokio::spawn(async move {
                for r in (w..rounds).step_by(CALLERS) {
                    relay_testkit::expect_ok(&client, "event.append", batch(r)).await;
                }
            })
        })
        .collect();
    for w in workers {
        w.await.unwrap();
    }
    start.elapsed().as_secs_f64()
}

async fn folded(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM cost_usage")
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn wait_folded(pool: &sqlx::PgPool, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(600);
    while folded(pool).await < n {
        assert!(Instant::now() < deadline, "not folded in 10 minutes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("RELAY_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let n = (n / BATCH).max(1) * BATCH;
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let quiet = [("RELAY_TELEMETRY__LOG_LEVEL", "warn")];
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &quiet);
    relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;
    let pool = db.pool().await;

    let append_secs = append(&client, n).await;
    let append_rate = n as f64 / append_secs;
    println!("appended {n} events in {append_secs:.2} s (aggregator stopped)");

    let start = Instant::now();
    let _aggregator = ServiceProcess::spawn(AGGREGATOR, &nats, &db, &quiet);
    relay_testkit::wait_for_instances(&client, "cost-aggregator", 1).await;
    wait_folded(&pool, n as i64).await;
    let catch_up_secs = start.elapsed().as_secs_f64();
    let catch_up_rate = n as f64 / catch_up_secs;
    println!("folded the backlog in {catch_up_secs:.2} s (including the aggregator's start)");

    let start = Instant::now();
    let live_append_secs = append(&client, n).await;
    let appended_at = start.elapsed();
    wait_folded(&pool, 2 * n as i64).await;
    let live_secs = start.elapsed().as_secs_f64();
    let lag_ms = (start.elapsed() - appended_at).as_millis();
    let live_rate = n as f64 / live_secs;
    println!("live: appended in {live_append_secs:.2} s, all folded {lag_ms} ms after the last append");

    let report = relay_testkit::expect_ok(&client, "cost.report", json!({})).await;
    assert_eq!(report["total"]["events"], 2 * n as i64, "every event folded once");

    println!("\n| case | events/s |\n| --- | ---: |");
    println!("| event.append, {CALLERS} callers × {BATCH}-event batches (baseline) | {append_rate:.0} |");
    println!("| cost fold, catching up on {n} events | {catch_up_rate:.0} |");
    println!("| cost fold while the same appends run (append → folded) | {live_rate:.0} |");
    println!("| fold lag after the last live append (ms) | {lag_ms} |");
    let doc = json!({
        "measuredAt": relay_bus::now_ms(),
        "events": n,
        "appendEventsPerSec": append_rate.round(),
        "foldCatchUpEventsPerSec": catch_up_rate.round(),
        "foldLiveEventsPerSec": live_rate.round(),
        "foldLagAfterLastAppendMs": lag_ms,
        "command": "make bench (cargo bench -p cost-aggregator --bench costs)",
    });
    relay_testkit::write_bench_results("costs", &doc);
}
