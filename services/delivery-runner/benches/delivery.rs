//! `make bench`: end-to-end deliveries to 10 agents, beside a bare SKIP LOCKED claim/ack loop
//! on the same tables measured in the same run. Prints a table and writes
//! bench/results/delivery.json.
//!
//! The mesh is real and release-built: session-registry, event-ingest and one delivery-runner
//! on a private nats-server and a fresh database; the 10 agents are harness-SDK sessions in this
//! process that surface each message at once (no PTY: the terminal is not what is measured).
//! - throughput: N messages committed while the agents are paused, then `agent.resume` for all
//!   and the clock runs until every receipt is stored (message committed → receipt persisted);
//! - latency: immediate messages sent at a steady rate; from the `session.sendMessage` reply
//!   (the message is committed) to the `delivery.delivered` event (published after the receipt
//!   is committed).
//!
//! RELAY_BENCH_MESSAGES sets N (default 20,000).

use futures::StreamExt;
use relay_contracts::delivery::{MessageContext, Receipt, ReceiptStatus};
use relay_contracts::session::Message;
use relay_harness::{AgentSession, AttachOptions, Binding};
use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNNER: &str = env!("CARGO_BIN_EXE_delivery-runner");
const AGENTS: usize = 10;

struct Instant_;

impl AgentSession for Instant_ {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        relay_harness::receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

async fn delivered(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE status = 'delivered'")
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("RELAY_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let nats = Nats::start().await;
    let db = Database::create().await;
    let client = nats.client().await;
    let quiet = [("RELAY_TELEMETRY__LOG_LEVEL", "warn")];
    let _registry = ServiceProcess::spawn(&relay_testkit::bin_path("session-registry"), &nats, &db, &quiet);
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &quiet);
    let runner_env = [(
        "RELAY_TELEMETRY__LOG_LEVEL",
        std::env::var("RELAY_BENCH_RUNNER_LOG").unwrap_or_else(|_| "warn".into()),
    )];
    let runner_env: Vec<(&str, &str)> = runner_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let _runner = ServiceProcess::spawn(RUNNER, &nats, &db, &runner_env);
    for service in ["session-registry", "event-ingest", "delivery-runner"] {
        relay_testkit::wait_for_instances(&client, service, 1).await;
    }
    let pool = db.pool().await;

    let caps: relay_contracts::capabilities::AgentSessionCapabilities = serde_json::from_value(json!({
        "messaging": {"receive": true}, "delivery": {"modes": ["immediate"]},
        "events": {"emits": ["status.changed"]}, "lifecycle": {"release": false}
    }))
    .unwrap();
    let mut agents = Vec::new();
    for a in 0..AGENTS {
        let opts = AttachOptions {
            session_id: format!("bench-{a}"),
            agent: json!({"kind": "adapter", "adapterName": "claude"}),
            capabilities: caps.clone(),
            adapter_session_id: None,
        };
        agents.push(Binding::attach(client.clone(), opts, Arc::new(Instant_)).await.unwrap());
    }

    // Latency first, on a quiet mesh: immediate messages at a steady 200/s for 5 s.
    let mut delivered_events = client.subscribe("delivery.delivered").await.unwrap();
    client.flush().await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
    let arrivals = tokio::spawn(async move {
        let mut at = HashMap::new();
        while let Ok(Some(m)) = tokio::time::timeout(Duration::from_secs(3), delivered_events.next()).await {
            let e: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
            at.insert(e["deliveryId"].as_str().unwrap().to_string(), Instant::now());
        }
        at
    });
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    for i in 0..1000 {
        tick.tick().await;
        let client = client.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let body = json!({"sessionId": format!("bench-{}", i % AGENTS), "message": format!("l{i}")});
            let sent = relay_testkit::expect_ok(&client, "session.sendMessage", body).await;
            let _ = tx.send((sent["deliveryIds"][0].as_str().unwrap().to_string(), Instant::now()));
        });
    }
    drop(tx);
    let mut committed = HashMap::new();
    while let Some((id, at)) = rx.recv().await {
        committed.insert(id, at);
    }
    let arrived = arrivals.await.unwrap();
    let mut lat: Vec<u64> = committed
        .iter()
        .filter_map(|(id, t0)| {
            arrived
                .get(id)
                .map(|t1| t1.saturating_duration_since(*t0).as_micros() as u64)
        })
        .collect();
    lat.sort_unstable();
    let missing = committed.len() - lat.len();
    // The same from the database's clock: message committed → receipt stored (ms resolution).
    let mut db_lat: Vec<i64> = sqlx::query_scalar(
        "SELECT d.updated_at - m.created_at FROM deliveries d JOIN registry_messages m USING (message_id)
         WHERE d.status = 'delivered' AND m.content_text LIKE 'l%'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    db_lat.sort_unstable();
    let db_pct = |p: f64| {
        db_lat
            .get(((db_lat.len() as f64 * p) as usize).min(db_lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };

    // Throughput: commit N messages while the agents are paused, then release them all at once.
    for b in &agents {
        relay_testkit::expect_ok(&client, "agent.pause", json!({"agentId": b.agent_id})).await;
    }
    let started_sending = Instant::now();
    let mut senders = Vec::new();
    for c in 0..32 {
        let client = client.clone();
        senders.push(tokio::spawn(async move {
            for i in (c..n).step_by(32) {
                let body = json!({"sessionId": format!("bench-{}", i % AGENTS), "message": format!("m{i}")});
                relay_testkit::expect_ok(&client, "session.sendMessage", body).await;
            }
        }));
    }
    for s in senders {
        s.await.unwrap();
    }
    eprintln!(
        "{n} messages committed in {:.1} s",
        started_sending.elapsed().as_secs_f64()
    );
    // Let the event log catch up with the sends first (the outboxes drained), so the clock
    // measures deliveries, not the backlog of the sends' own events.
    let drained = Instant::now();
    while sqlx::query_scalar::<_, i64>(
        "SELECT (SELECT count(*) FROM registry_events WHERE NOT forwarded) + (SELECT count(*) FROM delivery_events WHERE NOT forwarded)",
    )
    .fetch_one(&pool)
    .await
    .unwrap()
        > 0
        && drained.elapsed() < Duration::from_secs(180)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("event log caught up in {:.1} s", drained.elapsed().as_secs_f64());
    let start = Instant::now();
    for b in &agents {
        relay_testkit::expect_ok(&client, "agent.resume", json!({"agentId": b.agent_id})).await;
    }
    while delivered(&pool).await < n as i64 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let e2e_secs = start.elapsed().as_secs_f64();
    let e2e_rate = n as f64 / e2e_secs;

    // Baseline: the bare claim/ack loop on the same table and rows, 10 workers, batches of 50.
    sqlx::query("UPDATE deliveries SET status = 'pending', lease_until = NULL")
        .execute(&pool)
        .await
        .unwrap();
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM deliveries")
        .fetch_one(&pool)
        .await
        .unwrap();
    // Stop the runner first: the baseline must not race it.
    drop(_runner);
    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..AGENTS {
        let pool = pool.clone();
        workers.push(tokio::spawn(async move {
            loop {
                let claimed: Vec<String> = sqlx::query_scalar(
                    "UPDATE deliveries SET lease_until = 1 WHERE delivery_id IN (
                         SELECT delivery_id FROM deliveries WHERE status = 'pending' AND lease_until IS NULL
                         ORDER BY seq LIMIT 50 FOR UPDATE SKIP LOCKED) RETURNING delivery_id",
                )
                .fetch_all(&pool)
                .await
                .unwrap();
                if claimed.is_empty() {
                    break;
                }
                sqlx::query(
                    "UPDATE deliveries SET status = 'delivered', lease_until = NULL WHERE delivery_id = ANY($1)",
                )
                .bind(&claimed)
                .execute(&pool)
                .await
                .unwrap();
            }
        }));
    }
    for w in workers {
        w.await.unwrap();
    }
    let base_rate = total as f64 / start.elapsed().as_secs_f64();

    println!("\n| case | figure |\n| --- | ---: |");
    println!("| end-to-end deliveries/s, {AGENTS} agents, {n} messages | {e2e_rate:.0} |");
    println!("| bare SKIP LOCKED claim/ack loop rows/s (baseline) | {base_rate:.0} |");
    println!(
        "| immediate latency p50 / p99 (ms), {} messages at 200/s | {:.2} / {:.2} |",
        lat.len(),
        percentile(&lat, 0.50) as f64 / 1000.0,
        percentile(&lat, 0.99) as f64 / 1000.0
    );
    println!("| latency samples without a delivered event | {missing} |");
    println!(
        "| same, database clock (message created_at → receipt updated_at) p50 / p99 (ms) | {} / {} |",
        db_pct(0.50),
        db_pct(0.99)
    );
    let doc = json!({
        "measuredAt": relay_bus::now_ms(),
        "agents": AGENTS,
        "messages": n,
        "endToEndDeliveriesPerSec": e2e_rate.round(),
        "endToEndSeconds": e2e_secs,
        "baselineClaimAckRowsPerSec": base_rate.round(),
        "baselineRows": total,
        "immediateLatencyUs": {"p50": percentile(&lat, 0.50), "p99": percentile(&lat, 0.99), "max": lat.last().copied().unwrap_or(0), "samples": lat.len(), "missing": missing},
        "immediateLatencyDbClockMs": {"p50": db_pct(0.50), "p99": db_pct(0.99)},
        "command": "make bench (cargo bench -p delivery-runner --bench delivery)",
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/results");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("delivery.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    println!("\nwritten to {}", path.display());
    drop(agents);
}
