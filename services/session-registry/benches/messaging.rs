//! `make bench`: agent-to-agent messaging through the relay, beside a raw NATS request measured
//! in the same run on the same nats-server. Prints a table and writes
//! bench/results/messaging.json.
//!
//! The mesh is real and release-built: session-registry, event-ingest and a delivery-runner on
//! a private nats-server and a fresh database. 10 pairs of agents are harness-SDK sessions in
//! this process: A_i sends to `@b<i>` with `message.send` on its own harness subject (what its
//! harness does for `relay_send`, without the CLI's MCP hop), B_i takes each delivery at once.
//! - latency: 1,000 messages/s in all (100/s per pair) for RELAY_BENCH_SECONDS (default 5)
//!   after 1 s of warm-up; from A's `message.send` to B's `delivery.delivered` event (published
//!   once the receipt is committed);
//! - throughput: every A sends RELAY_BENCH_MESSAGES / 10 (default 5,000 in all) as fast as 4
//!   requests in flight allow; from the first send to the last `delivery.delivered`;
//! - baseline: a raw NATS request to an echo responder in this process, at the same rate;
//! - floor: what one message needs at least with the same durability, one committed INSERT
//!   (its own transaction, fsynced as the relay's are) then one NATS publish to a subscriber,
//!   at the same rate and flat out with as many in flight;
//! - profile: Postgres per relayed message (statements, transactions, rows, WAL; the mesh runs
//!   on a private server with pg_stat_statements) over the throughput case.

use futures::StreamExt;
use relay_contracts::access::harness_subject;
use relay_contracts::delivery::{MessageContext, Receipt, ReceiptStatus};
use relay_contracts::session::Message;
use relay_harness::{AgentSession, AttachOptions, Binding};
use relay_testkit::{Database, Nats, Postgres, ServiceProcess, SqlProfile, percentile};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const REGISTRY: &str = env!("CARGO_BIN_EXE_session-registry");
const PAIRS: usize = 10;
/// Offered rates per pair: 200/s and 1,000/s in all.
const RATES_PER_PAIR: [u64; 2] = [20, 100];
/// The baseline's rate per pair.
const RATE_PER_PAIR: u64 = 100;

struct Taker;

impl AgentSession for Taker {
    async fn receive_message(&self, _message: Message, ctx: MessageContext) -> Receipt {
        relay_harness::receipt(ReceiptStatus::Delivered, &ctx.id)
    }

    async fn release(&self, _reason: Option<String>) {}
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// When each delivery's `delivery.delivered` event arrived, until `quiet` passes without one.
fn arrivals(mut sub: async_nats::Subscriber, quiet: Duration) -> tokio::task::JoinHandle<HashMap<String, Instant>> {
    tokio::spawn(async move {
        let mut at = HashMap::new();
        while let Ok(Some(m)) = tokio::time::timeout(quiet, sub.next()).await {
            let e: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
            at.insert(e["deliveryId"].as_str().unwrap_or_default().to_string(), Instant::now());
        }
        at
    })
}

/// One send as agent `from` (on its harness subject) to `@to`; the delivery id.
async fn send(client: &async_nats::Client, from: &str, to: &str, text: String) -> Option<String> {
    let subject = harness_subject("default", from, "message.send");
    let sent = relay_testkit::call_json(client, &subject, json!({"to": format!("@{to}"), "text": text})).await;
    match sent {
        Ok(v) => v["recipients"][0]["deliveryId"].as_str().map(String::from),
        Err(e) => {
            eprintln!("send refused: {e}");
            None
        }
    }
}

/// What a latency case measured.
struct Case {
    offered: f64,
    /// message.send → delivery.delivered, sorted µs.
    end_to_end: Vec<u64>,
    /// message.send → its reply (stored and handed to the runner), sorted µs.
    accept: Vec<u64>,
    not_delivered: usize,
    /// ms of CPU per message by program, the largest first.
    cpu: Vec<(String, f64)>,
}

/// ms of CPU per message by program since `before`, the largest first.
fn cpu_per_message(before: &relay_testkit::CpuReading, messages: usize) -> Vec<(String, f64)> {
    relay_testkit::cpu_ms_per_message(&relay_testkit::cpu_reading().used_since(before), messages)
}

fn cpu_line(cpu: &[(String, f64)]) -> String {
    let total: f64 = cpu.iter().map(|c| c.1).sum();
    let parts: Vec<String> = cpu.iter().map(|(n, ms)| format!("{n} {ms:.2}")).collect();
    format!("{total:.2} ms ({})", parts.join(", "))
}

fn cpu_json(cpu: &[(String, f64)]) -> serde_json::Value {
    json!({
        "total_ms": (cpu.iter().map(|c| c.1).sum::<f64>() * 100.0).round() / 100.0,
        "by_program": cpu.iter().map(|(n, ms)| json!({"program": n, "ms": (ms * 100.0).round() / 100.0})).collect::<Vec<_>>(),
    })
}

/// Latency with `per_pair` messages/s from each A (the first second warms up, not measured):
/// from A's `message.send` to its reply and to B's `delivery.delivered`.
async fn latency(client: &async_nats::Client, pairs: &[(String, String)], per_pair: u64, secs: u64) -> Case {
    let delivered = client.subscribe("delivery.delivered").await.unwrap();
    client.flush().await.unwrap();
    let arrived = arrivals(delivered, Duration::from_secs(3));
    let cpu_before = relay_testkit::cpu_reading();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant, u64)>();
    let ticks = (1 + secs) * per_pair;
    let warm_up = per_pair;
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_pair));
    for t in 0..ticks {
        tick.tick().await;
        for (from, to) in pairs {
            let (client, tx, from, to) = (client.clone(), tx.clone(), from.clone(), to.clone());
            tokio::spawn(async move {
                let t0 = Instant::now();
                if let Some(id) = send(&client, &from, &to, format!("m{t}")).await
                    && t >= warm_up
                {
                    let _ = tx.send((id, t0, t0.elapsed().as_micros() as u64));
                }
            });
        }
    }
    drop(tx);
    let (mut sent, mut accept) = (HashMap::new(), Vec::new());
    while let Some((id, at, accepted)) = rx.recv().await {
        sent.insert(id, at);
        accept.push(accepted);
    }
    accept.sort_unstable();
    let arrived = arrived.await.unwrap();
    // Every message of the case, warm-up included, was sent in these (1 + secs) seconds.
    let cpu = cpu_per_message(&cpu_before, ((1 + secs) * per_pair) as usize * pairs.len());
    let end_to_end = relay_testkit::latencies_us(&sent, &arrived);
    Case {
        offered: (pairs.len() as u64 * per_pair) as f64,
        not_delivered: sent.len() - end_to_end.len(),
        end_to_end,
        accept,
        cpu,
    }
}

/// The floor: one committed INSERT then one publish per message, received by a subscriber.
/// `per_pair` Some: paced as the latency cases (sorted µs after the warm-up second); None:
/// `n` messages flat out from PAIRS × 4 lanes (then the µs list is empty). (sorted µs, msgs/s)
async fn floor(
    client: &async_nats::Client,
    pool: &sqlx::PgPool,
    per_pair: Option<u64>,
    secs: u64,
    n: usize,
) -> (Vec<u64>, f64) {
    let mut sub = client.subscribe("bench.messaging.floor").await.unwrap();
    client.flush().await.unwrap();
    let got = tokio::spawn(async move {
        let mut at = HashMap::new();
        while let Ok(Some(m)) = tokio::time::timeout(Duration::from_secs(2), sub.next()).await {
            at.insert(String::from_utf8_lossy(&m.payload).to_string(), Instant::now());
        }
        at
    });
    let one = |client: async_nats::Client, pool: sqlx::PgPool, id: String| async move {
        sqlx::query("INSERT INTO bench_floor (id, body) VALUES ($1, $2)")
            .bind(&id)
            .bind(json!({"to": "@b0", "text": id}))
            .execute(&pool)
            .await
            .unwrap();
        client.publish("bench.messaging.floor", id.into()).await.unwrap();
    };
    let start = Instant::now();
    let mut sent = HashMap::new();
    match per_pair {
        Some(per_pair) => {
            let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_pair));
            let mut tasks = Vec::new();
            for t in 0..(1 + secs) * per_pair {
                tick.tick().await;
                for p in 0..PAIRS {
                    let id = format!("f{t}-{p}");
                    if t >= per_pair {
                        sent.insert(id.clone(), Instant::now());
                    }
                    tasks.push(tokio::spawn(one(client.clone(), pool.clone(), id)));
                }
            }
            futures::future::join_all(tasks).await;
        }
        None => {
            let lanes: Vec<_> = (0..PAIRS * 4)
                .map(|lane| {
                    let (client, pool) = (client.clone(), pool.clone());
                    tokio::spawn(async move {
                        for i in (lane..n).step_by(PAIRS * 4) {
                            one(client.clone(), pool.clone(), format!("t{i}")).await;
                        }
                    })
                })
                .collect();
            futures::future::join_all(lanes).await;
        }
    }
    client.flush().await.unwrap();
    let got = got.await.unwrap();
    let last = got.values().max().copied().unwrap_or(start);
    let rate = got.len() as f64 / last.saturating_duration_since(start).as_secs_f64().max(f64::EPSILON);
    (relay_testkit::latencies_us(&sent, &got), rate)
}

#[tokio::main]
async fn main() {
    let secs: u64 = std::env::var("RELAY_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let n: usize = std::env::var("RELAY_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    let nats = Nats::start().await;
    let pg = Postgres::start_profiled().await;
    let db = Database::create_on(&pg.admin_url).await;
    let client = nats.client().await;
    let quiet = [("RELAY_TELEMETRY__LOG_LEVEL", "warn")];
    // A pair exchanges a few thousand messages a minute here: the guard is for loops, not this.
    let registry_env = [
        ("RELAY_TELEMETRY__LOG_LEVEL", "warn"),
        ("RELAY_REGISTRY__MESSAGING__MAX_PER_MINUTE", "1000000"),
    ];
    let _registry = ServiceProcess::spawn(REGISTRY, &nats, &db, &registry_env);
    let _ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &quiet);
    let _runner = ServiceProcess::spawn(&relay_testkit::bin_path("delivery-runner"), &nats, &db, &quiet);
    for service in ["session-registry", "event-ingest", "delivery-runner"] {
        relay_testkit::wait_for_instances(&client, service, 1).await;
    }

    let caps: relay_contracts::capabilities::AgentSessionCapabilities = serde_json::from_value(json!({
        "messaging": {"receive": true, "send": true}, "delivery": {"modes": ["immediate"]},
        "events": {"emits": ["status.changed"]}, "lifecycle": {"release": false}
    }))
    .unwrap();
    let mut bindings = Vec::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    for p in 0..PAIRS {
        let mut ids = Vec::new();
        for side in ["a", "b"] {
            let opts = AttachOptions::new(
                format!("bench-{side}{p}"),
                relay_contracts::session::AgentSelection::adapter("claude"),
                caps.clone(),
            )
            .handle(format!("{side}{p}"));
            let b = Binding::attach(client.clone(), opts, Arc::new(Taker)).await.unwrap();
            ids.push(b.agent_id.clone());
            bindings.push(b);
        }
        pairs.push((ids[0].clone(), format!("b{p}")));
    }

    let mut cases = Vec::new();
    for per_pair in RATES_PER_PAIR {
        cases.push(latency(&client, &pairs, per_pair, secs).await);
    }
    // Baseline: a raw NATS request to an echo responder, at the same rate.
    let mut echo = client.subscribe("bench.messaging.echo").await.unwrap();
    let responder = client.clone();
    tokio::spawn(async move {
        while let Some(m) = echo.next().await {
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, m.payload).await;
            }
        }
    });
    client.flush().await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    let (ticks, warm_up) = ((1 + secs) * RATE_PER_PAIR, RATE_PER_PAIR);
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE_PER_PAIR));
    for t in 0..ticks {
        tick.tick().await;
        for _ in 0..PAIRS {
            let (client, tx) = (client.clone(), tx.clone());
            tokio::spawn(async move {
                let t0 = Instant::now();
                client.request("bench.messaging.echo", "ping".into()).await.unwrap();
                if t >= warm_up {
                    let _ = tx.send(t0.elapsed().as_micros() as u64);
                }
            });
        }
    }
    drop(tx);
    let mut raw = Vec::new();
    while let Some(us) = rx.recv().await {
        raw.push(us);
    }
    raw.sort_unstable();
    // The floor, on the mesh's database with the pool settings of the services.
    let pool = db.pool().await;
    sqlx::query("CREATE TABLE bench_floor (id TEXT PRIMARY KEY, body JSONB NOT NULL)")
        .execute(&pool)
        .await
        .unwrap();
    let (floor_lat, _) = floor(&client, &pool, Some(RATE_PER_PAIR), secs, 0).await;
    let (_, floor_rate) = floor(&client, &pool, None, secs, n).await;

    // Throughput: every A sends its share with 4 requests in flight; until the last delivered.
    let delivered = client.subscribe("delivery.delivered").await.unwrap();
    client.flush().await.unwrap();
    let arrived = arrivals(delivered, Duration::from_secs(5));
    let per_pair = n / PAIRS;
    let sql = SqlProfile::start(&pg, &db).await;
    let cpu_before = relay_testkit::cpu_reading();
    let start = Instant::now();
    let mut senders = Vec::new();
    for (from, to) in pairs.clone() {
        for lane in 0..4 {
            let (client, from, to) = (client.clone(), from.clone(), to.clone());
            senders.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in (lane..per_pair).step_by(4) {
                    ids.extend(send(&client, &from, &to, format!("t{i}")).await);
                }
                ids
            }));
        }
    }
    let mut ids = Vec::new();
    for s in senders {
        ids.extend(s.await.unwrap());
    }
    let sends_secs = start.elapsed().as_secs_f64();
    let arrived = arrived.await.unwrap();
    let last = ids
        .iter()
        .filter_map(|id| arrived.get(id))
        .max()
        .copied()
        .unwrap_or(start);
    let through_secs = last.saturating_duration_since(start).as_secs_f64();
    let through_missing = ids.iter().filter(|id| !arrived.contains_key(*id)).count();
    let throughput = (ids.len() - through_missing) as f64 / through_secs.max(f64::EPSILON);
    let through_cpu = cpu_per_message(&cpu_before, ids.len());
    let sql = sql.read(ids.len(), 12).await;

    let (r50, r99) = (percentile(&raw, 0.50), percentile(&raw, 0.99));
    println!("agent-to-agent messaging ({PAIRS} pairs), message.send → delivery.delivered");
    println!("{:<44} {:>10} {:>10} {:>10}", "case", "p50 ms", "p99 ms", "msgs/s");
    let mut latency_json = Vec::new();
    for c in &cases {
        let (p50, p99) = (percentile(&c.end_to_end, 0.50), percentile(&c.end_to_end, 0.99));
        println!(
            "{:<44} {:>10.2} {:>10.2} {:>10.0}",
            format!(
                "relay at {:.0}/s offered ({} not delivered)",
                c.offered, c.not_delivered
            ),
            ms(p50),
            ms(p99),
            c.end_to_end.len() as f64 / secs as f64
        );
        println!(
            "{:<44} {:>10.2} {:>10.2}",
            "  of which the send's reply (accepted)",
            ms(percentile(&c.accept, 0.50)),
            ms(percentile(&c.accept, 0.99)),
        );
        println!("  CPU per message: {}", cpu_line(&c.cpu));
        latency_json.push(json!({
            "offered_per_s": c.offered, "measured": c.end_to_end.len(), "p50_ms": ms(p50), "p99_ms": ms(p99),
            "not_delivered": c.not_delivered,
            "accept_p50_ms": ms(percentile(&c.accept, 0.50)), "accept_p99_ms": ms(percentile(&c.accept, 0.99)),
            "cpu_per_message": cpu_json(&c.cpu),
        }));
    }
    println!(
        "{:<44} {:>10.2} {:>10.2} {:>10.0}",
        format!("raw NATS request at {}/s", PAIRS as u64 * RATE_PER_PAIR),
        ms(r50),
        ms(r99),
        raw.len() as f64 / secs as f64
    );
    println!(
        "{:<44} {:>10.2} {:>10.2} {:>10.0}",
        format!("floor (INSERT + publish) at {}/s", PAIRS as u64 * RATE_PER_PAIR),
        ms(percentile(&floor_lat, 0.50)),
        ms(percentile(&floor_lat, 0.99)),
        floor_lat.len() as f64 / secs as f64
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10.0}",
        format!("floor throughput ({n} messages)"),
        "",
        "",
        floor_rate
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10.0}",
        format!("relay throughput ({} messages)", ids.len()),
        "",
        "",
        throughput
    );
    println!("throughput: {through_missing} not delivered; the sends took {sends_secs:.1} s");
    println!("CPU per relayed message (throughput): {}", cpu_line(&through_cpu));
    println!(
        "Postgres per relayed message: {}; most often:",
        SqlProfile::summary(&sql)
    );
    for line in SqlProfile::top_lines(&sql) {
        println!("{line}");
    }
    relay_testkit::write_bench_results(
        "messaging",
        &json!({
            "command": "make bench (cargo bench -p session-registry --bench messaging)",
            "pairs": PAIRS,
            "latency": latency_json,
            "baseline_raw_nats_request": {"offered_per_s": PAIRS as u64 * RATE_PER_PAIR, "p50_ms": ms(r50), "p99_ms": ms(r99), "measured": raw.len()},
            "floor_insert_and_publish": {
                "offered_per_s": PAIRS as u64 * RATE_PER_PAIR, "p50_ms": ms(percentile(&floor_lat, 0.50)),
                "p99_ms": ms(percentile(&floor_lat, 0.99)), "measured": floor_lat.len(), "messages_per_s": floor_rate,
            },
            "postgres_per_message": sql,
            "throughput": {
                "messages": ids.len(),
                "messages_per_s": throughput,
                "seconds": through_secs,
                "not_delivered": through_missing,
                "cpu_per_message": cpu_json(&through_cpu),
            },
            "aim": "p99 under 20 ms at 1,000 messages/s",
        }),
    );
    drop(bindings);
}
