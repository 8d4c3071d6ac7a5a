//! `make bench` (events): committed events per second through `event.append` with batched
//! appenders, beside a raw Postgres COPY of the same rows into a table with the same indexes,
//! measured in the same run; then replay speed from seq 0 through `event.since`.
//! Writes bench/results/events.json.
//!
//! RELAY_BENCH_EVENTS sets the number of events (default 200000).

use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_event-ingest");
const BATCH: usize = 1000;
const APPENDERS: usize = 4;
const ROUNDS: usize = 3;

fn event(i: usize) -> Value {
    json!({
        "eventId": format!("ev-{i}"),
        "type": "tool.called",
        "sessionId": format!("s{}", i % 64),
        "agentName": "bench",
        "payload": {"tool": "bash", "input": {"command": "ls -la", "n": i}},
    })
}

async fn copy_baseline(db: &Database, n: usize) -> f64 {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("CREATE TABLE events_copy (LIKE events INCLUDING ALL)")
        .execute(&mut conn)
        .await
        .unwrap();
    let mut rows = String::with_capacity(n * 160);
    for i in 0..n {
        let e = event(i);
        rows.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t\\N\t{}\n",
            i + 1,
            e["eventId"].as_str().unwrap(),
            e["type"].as_str().unwrap(),
            relay_bus::now_ms(),
            e["sessionId"].as_str().unwrap(),
            i / 64 + 1,
            e["agentName"].as_str().unwrap(),
            e["payload"]
        ));
    }
    let start = Instant::now();
    let mut copy = conn
        .copy_in_raw("COPY events_copy (seq, event_id, type, ts, session_id, session_seq, agent_name, agent_id, payload) FROM STDIN")
        .await
        .unwrap();
    for chunk in rows.as_bytes().chunks(1 << 20) {
        copy.send(chunk).await.unwrap();
    }
    let copied = copy.finish().await.unwrap();
    assert_eq!(copied as usize, n);
    n as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::var("RELAY_BENCH_EVENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let nats = Nats::start().await;
    let db = Database::create().await;
    let mut ingest = ServiceProcess::spawn(BIN, &nats, &db, &[("RELAY_TELEMETRY__LOG_LEVEL", "warn")]);
    let client = nats.client().await;
    relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;

    // Batched appenders: each sends its share in requests of BATCH events, one at a time.
    // Three rounds of n events each (fresh ids); the median is reported, the spread kept.
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        // Request bodies are encoded before the clock starts: the two cores are for the
        // service, Postgres and NATS, not for generating input.
        let mut bodies: Vec<Vec<Vec<u8>>> = vec![Vec::new(); APPENDERS];
        for (b, start) in (0..n).step_by(BATCH).enumerate() {
            let events: Vec<Value> = (start..(start + BATCH).min(n)).map(|k| event(round * n + k)).collect();
            bodies[b % APPENDERS].push(serde_json::to_vec(&json!({ "events": events })).unwrap());
        }
        let start = Instant::now();
        let mut tasks = Vec::new();
        for mine in bodies {
            let client = client.clone();
            tasks.push(tokio::spawn(async move {
                let mut acked = 0;
                for body in mine {
                    let reply =
                        relay_bus::client::request_bytes(&client, "event.append", body, Duration::from_secs(60))
                            .await
                            .unwrap();
                    let reply: Value = serde_json::from_slice(&reply).unwrap();
                    acked += reply["appended"].as_array().unwrap().len();
                }
                acked
            }));
        }
        let mut acked = 0;
        for t in tasks {
            acked += t.await.unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(acked, n);
        eprintln!("round {round}: appended {n} events in {secs:.2} s");
        rounds.push(n as f64 / secs);
    }
    let mut sorted = rounds.clone();
    sorted.sort_by(f64::total_cmp);
    let append_rate = sorted[ROUNDS / 2];
    let append_secs = n as f64 / append_rate;

    // Replay from seq 0 in pages.
    let start = Instant::now();
    let (mut from, mut replayed) = (0i64, 0usize);
    loop {
        let page: Value = relay_bus::client::request(
            &client,
            "event.since",
            &json!({"seq": from, "limit": 10000}),
            Duration::from_secs(60),
        )
        .await
        .unwrap();
        let events = page["events"].as_array().unwrap();
        if events.is_empty() {
            break;
        }
        replayed += events.len();
        from = page["nextSeq"].as_i64().unwrap();
    }
    let replay_rate = replayed as f64 / start.elapsed().as_secs_f64();
    assert_eq!(replayed, n * ROUNDS);
    ingest.terminate().await;

    let copy_rate = copy_baseline(&db, n).await;

    println!("\n{:<46} {:>12}", "case", "events/s");
    println!(
        "{:<46} {:>12.0}",
        format!("event.append, {APPENDERS} appenders x {BATCH}-event batches"),
        append_rate
    );
    println!(
        "{:<46} {:>12.0}",
        "raw Postgres COPY of the same rows (baseline)", copy_rate
    );
    println!(
        "{:<46} {:>12.0}",
        "replay via event.since from seq 0 (10k pages)", replay_rate
    );

    let doc = json!({
        "benchmark": "events",
        "command": "make bench",
        "measuredAt": relay_bus::now_ms(),
        "machine": { "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get), "os": std::env::consts::OS },
        "setup": format!("private nats-server and a fresh Postgres database on loopback; one event-ingest release process; {n} tool.called events (~150 B payload) over 64 sessions; COPY into a table LIKE events INCLUDING ALL (same indexes)"),
        "results": [
            { "case": "event.append batched", "appenders": APPENDERS, "batch": BATCH, "events": n, "seconds": append_secs, "eventsPerSec": append_rate.round(), "rounds": rounds.iter().map(|r| r.round()).collect::<Vec<_>>() },
            { "case": "postgres COPY baseline", "events": n, "eventsPerSec": copy_rate.round() },
            { "case": "replay from seq 0", "pageSize": 10000, "events": replayed, "eventsPerSec": replay_rate.round() },
        ],
    });
    relay_testkit::write_bench_results("events", &doc);
}
