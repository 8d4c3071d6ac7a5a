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
use relay_testkit::{Database, Nats, ServiceProcess, percentile};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RUNNER: &str = env!("CARGO_BIN_EXE_delivery-runner");
const AGENTS: usize = 10;
/// Immediate messages sent (at the same 200/s) before the latency is measured.
const WARM_UP: usize = 200;

/// When each delivery reached its harness: splits the latency into runner and settle parts.
static REACHED: std::sync::Mutex<Option<HashMap<String, Instant>>> = std::sync::Mutex::new(None);

struct Instant_;

impl AgentSession for Instant_ {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        if let Some(m) = REACHED.lock().unwrap().as_mut() {
            m.insert(ctx.id.clone(), Instant::now());
        }
        relay_harness::receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

async fn delivered(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM deliveries WHERE status = 'delivered'")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// The latency floor of a delivery on this machine, measured in the same run: a row committed
/// with a NOTIFY (the message), a LISTEN connection that takes it, one NATS round trip (the
/// harness), an UPDATE committed (the receipt); 1,000 at 200/s after the same warm-up as the
/// immediate case. No
/// relay code runs: this is what Postgres, NATS and the scheduler alone cost.
async fn bare_latency(pool: &sqlx::PgPool, client: &async_nats::Client) -> Vec<u64> {
    sqlx::query("CREATE TABLE bench_floor (id BIGINT PRIMARY KEY, done BOOLEAN NOT NULL)")
        .execute(pool)
        .await
        .unwrap();
    let mut echo = client.subscribe("bench.floor.echo").await.unwrap();
    let responder = client.clone();
    tokio::spawn(async move {
        while let Some(m) = echo.next().await {
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, m.payload).await;
            }
        }
    });
    client.flush().await.unwrap();
    let mut listener = sqlx::postgres::PgListener::connect_with(pool).await.unwrap();
    listener.listen("bench_floor").await.unwrap();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<(i64, Instant)>();
    let (pool2, client2) = (pool.clone(), client.clone());
    let taker = tokio::spawn(async move {
        while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(3), listener.recv()).await {
            let id: i64 = n.payload().parse().unwrap();
            let (pool, client, done_tx) = (pool2.clone(), client2.clone(), done_tx.clone());
            tokio::spawn(async move {
                client.request("bench.floor.echo", id.to_string().into()).await.unwrap();
                sqlx::query("UPDATE bench_floor SET done = true WHERE id = $1")
                    .bind(id)
                    .execute(&pool)
                    .await
                    .unwrap();
                let _ = done_tx.send((id, Instant::now()));
            });
        }
    });
    let mut sent = HashMap::new();
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    let (sent_tx, mut sent_rx) = tokio::sync::mpsc::unbounded_channel::<(i64, Instant)>();
    for i in 0..(WARM_UP + 1000) as i64 {
        tick.tick().await;
        let (pool, sent_tx) = (pool.clone(), sent_tx.clone());
        tokio::spawn(async move {
            sqlx::query(
                "WITH i AS (INSERT INTO bench_floor VALUES ($1, false)) SELECT pg_notify('bench_floor', $1::text)",
            )
            .bind(i)
            .execute(&pool)
            .await
            .unwrap();
            let _ = sent_tx.send((i, Instant::now()));
        });
    }
    drop(sent_tx);
    while let Some((id, at)) = sent_rx.recv().await {
        sent.insert(id, at);
    }
    taker.await.unwrap();
    let mut lat = Vec::new();
    while let Ok((id, t1)) = done_rx.try_recv() {
        if let Some(t0) = sent.get(&id).filter(|_| id >= WARM_UP as i64) {
            lat.push(t1.saturating_duration_since(*t0).as_micros() as u64);
        }
    }
    lat.sort_unstable();
    lat
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
        let opts = AttachOptions::new(
            format!("bench-{a}"),
            relay_contracts::session::AgentSelection::adapter("claude"),
            caps.clone(),
        );
        agents.push(Binding::attach(client.clone(), opts, Arc::new(Instant_)).await.unwrap());
    }

    // Latency first, on a quiet mesh: immediate messages at a steady 200/s for 5 s.
    *REACHED.lock().unwrap() = Some(HashMap::new());
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
    // The first second warms up (agents claimed, connections opened) and is not measured.
    for i in 0..WARM_UP + 1000 {
        tick.tick().await;
        let client = client.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let text = if i < WARM_UP { format!("w{i}") } else { format!("l{i}") };
            let body = json!({"sessionId": format!("bench-{}", i % AGENTS), "message": text});
            // From the send: the registry answers once the runner has the delivery (hand-off),
            // which is often after the harness got it.
            let t0 = Instant::now();
            let sent = relay_testkit::expect_ok(&client, "session.sendMessage", body).await;
            if i >= WARM_UP {
                let _ = tx.send((sent["deliveryIds"][0].as_str().unwrap().to_string(), t0));
            }
        });
    }
    drop(tx);
    let mut committed = HashMap::new();
    while let Some((id, at)) = rx.recv().await {
        committed.insert(id, at);
    }
    let arrived = arrivals.await.unwrap();
    let lat = relay_testkit::latencies_us(&committed, &arrived);
    let missing = committed.len() - lat.len();
    // Where the time goes: sent → at the harness (commit, hand-off, claim, load, hand-over), and at the
    // harness → delivered event (receipt reply, group commit, publish).
    let reached = REACHED.lock().unwrap().take().unwrap_or_default();
    let mut to_harness: Vec<u64> = Vec::new();
    let mut to_receipt: Vec<u64> = Vec::new();
    for (id, t0) in &committed {
        if let (Some(r), Some(t1)) = (reached.get(id), arrived.get(id)) {
            to_harness.push(r.saturating_duration_since(*t0).as_micros() as u64);
            to_receipt.push(t1.saturating_duration_since(*r).as_micros() as u64);
        }
    }
    to_harness.sort_unstable();
    to_receipt.sort_unstable();
    if std::env::var("RELAY_BENCH_DUMP").is_ok() {
        let first = committed.values().min().copied().unwrap();
        let mut slow: Vec<(u128, u128, u128)> = committed
            .iter()
            .filter_map(|(id, t0)| {
                let r = reached.get(id)?;
                let t1 = arrived.get(id)?;
                Some((
                    t0.duration_since(first).as_millis(),
                    r.duration_since(*t0).as_micros(),
                    t1.duration_since(*r).as_micros(),
                ))
            })
            .collect();
        slow.sort_by_key(|x| std::cmp::Reverse(x.1 + x.2));
        for x in slow.iter().take(25) {
            eprintln!("slow: at {} ms: to harness {} us, to event {} us", x.0, x.1, x.2);
        }
    }
    // The same from the database's clock: message committed → receipt stored (ms resolution).
    let mut db_lat: Vec<i64> = sqlx::query_scalar(
        "SELECT d.updated_at - m.created_at FROM deliveries d JOIN delivery_messages m USING (message_id)
         WHERE d.status = 'delivered' AND m.doc->>'contentText' LIKE 'l%'",
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

    let floor = bare_latency(&pool, &client).await;

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
    // The latency phase's deliveries are in the table too: count only the new ones.
    let before = delivered(&pool).await;
    let start = Instant::now();
    for b in &agents {
        relay_testkit::expect_ok(&client, "agent.resume", json!({"agentId": b.agent_id})).await;
    }
    while delivered(&pool).await - before < n as i64 {
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
        "| immediate latency, send → delivered event, p50 / p99 (ms), {} messages at 200/s | {:.2} / {:.2} |",
        lat.len(),
        percentile(&lat, 0.50) as f64 / 1000.0,
        percentile(&lat, 0.99) as f64 / 1000.0
    );
    println!(
        "| bare path latency p50 / p99 (ms): INSERT+NOTIFY → LISTEN → NATS round trip → UPDATE (baseline) | {:.2} / {:.2} |",
        percentile(&floor, 0.50) as f64 / 1000.0,
        percentile(&floor, 0.99) as f64 / 1000.0
    );
    println!(
        "| of which sent → at the harness, p50 / p99 (ms) | {:.2} / {:.2} |",
        percentile(&to_harness, 0.50) as f64 / 1000.0,
        percentile(&to_harness, 0.99) as f64 / 1000.0
    );
    println!(
        "| of which at the harness → delivered event, p50 / p99 (ms) | {:.2} / {:.2} |",
        percentile(&to_receipt, 0.50) as f64 / 1000.0,
        percentile(&to_receipt, 0.99) as f64 / 1000.0
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
        "immediateSplitUs": {"sentToHarness": {"p50": percentile(&to_harness, 0.50), "p99": percentile(&to_harness, 0.99)},
                             "harnessToDeliveredEvent": {"p50": percentile(&to_receipt, 0.50), "p99": percentile(&to_receipt, 0.99)}},
        "barePathLatencyUs": {"p50": percentile(&floor, 0.50), "p99": percentile(&floor, 0.99), "max": floor.last().copied().unwrap_or(0), "samples": floor.len()},
        "command": "make bench (cargo bench -p delivery-runner --bench delivery)",
    });
    relay_testkit::write_bench_results("delivery", &doc);
    drop(agents);
}
