//! `make bench`: session.create and session.get over NATS against a real registry process and
//! Postgres, with 1 and 32 concurrent callers, beside a raw NATS echo responder measured in the
//! same run on the same nats-server. Prints a table and writes bench/results/registry.json.
//!
//! RELAY_BENCH_SECONDS sets the measured time per case (default 3, after 0.5 s of warm-up).

use futures::StreamExt;
use relay_testkit::{Database, Nats, ServiceProcess};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_session-registry");
const GET_POOL: u64 = 1000;

/// Request number across all cases, so that no two create requests reuse an id.
static REQUESTS: AtomicU64 = AtomicU64::new(0);

struct Case {
    name: &'static str,
    concurrency: usize,
    requests: usize,
    errors: usize,
    seconds: f64,
    p50_us: u64,
    p99_us: u64,
}

impl Case {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

/// Runs `concurrency` callers in a closed loop for `secs`, each request built by `body(n)`.
async fn measure(
    client: &async_nats::Client,
    name: &'static str,
    subject: &'static str,
    concurrency: usize,
    secs: f64,
    body: Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync>,
) -> Case {
    let warmup = Duration::from_millis(500);
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, body) = (client.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors) = (Vec::new(), 0usize);
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let payload = body(REQUESTS.fetch_add(1, Ordering::Relaxed));
                let reply = client.request(subject, payload.into()).await;
                let failed = match &reply {
                    Ok(msg) => msg
                        .headers
                        .as_ref()
                        .is_some_and(|h| h.get("Nats-Service-Error-Code").is_some()),
                    Err(_) => true,
                };
                if now >= measure_from {
                    lat.push(now.elapsed().as_micros() as u64);
                    errors += failed as usize;
                }
            }
            (lat, errors)
        }));
    }
    let (mut lat, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (l, e) = t.await.expect("caller");
        lat.extend(l);
        errors += e;
    }
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Case {
        name,
        concurrency,
        requests: lat.len(),
        errors,
        seconds: secs,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
    }
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::var("RELAY_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    // The same cases with NATS auth on (every identity its own JWT and permissions, the
    // default) and off, in one run: what the boundary costs.
    let mut all = Vec::new();
    for auth in [true, false] {
        eprintln!("== NATS auth {}", if auth { "on" } else { "off" });
        all.extend(suite(auth, secs).await.into_iter().map(|c| (auth, c)));
    }
    report(&all);
}

async fn suite(auth: bool, secs: f64) -> Vec<Case> {
    let nats = if auth {
        Nats::start().await
    } else {
        Nats::start_without_auth().await
    };
    let db = Database::create().await;
    let mut registry = ServiceProcess::spawn(
        BIN,
        &nats,
        &db,
        &[
            ("RELAY_DATABASE__MAX_CONNECTIONS", "16"),
            ("RELAY_TELEMETRY__LOG_LEVEL", "warn"),
            ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
            ("RELAY_REGISTRY__HAND_OVER_DELIVERIES", "false"),
        ],
    );
    let client = nats.client().await;
    relay_testkit::wait_for_instances(&client, "session-registry", 1).await;

    // Baseline: a responder that echoes the body back, on its own connection.
    let echo_client = nats.client().await;
    let mut echo = echo_client.queue_subscribe("bench.echo", "q".into()).await.unwrap();
    tokio::spawn(async move {
        while let Some(msg) = echo.next().await {
            if let Some(reply) = msg.reply {
                let _ = echo_client.publish(reply, msg.payload).await;
            }
        }
    });

    let run = uuid_prefix();
    for i in 0..GET_POOL {
        let body = json!({"sessionId": format!("{run}-get-{i}"), "title": "bench"});
        relay_testkit::call_json(&client, "session.create", body)
            .await
            .expect("seed session");
    }
    eprintln!("seeded {GET_POOL} sessions; {secs} s per case");

    let echo_body: Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync> =
        Arc::new(|_| br#"{"sessionId":"0190f5d2-aaaa-7bbb-8ccc-dddddddddddd"}"#.to_vec());
    let run_c = run.clone();
    let create_body: Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync> =
        Arc::new(move |n| format!(r#"{{"sessionId":"{run_c}-c-{n}","title":"bench"}}"#).into_bytes());
    let run_g = run.clone();
    let get_body: Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync> =
        Arc::new(move |n| format!(r#"{{"sessionId":"{run_g}-get-{}"}}"#, n % GET_POOL).into_bytes());

    let mut cases = Vec::new();
    for concurrency in [1, 32] {
        cases.push(
            measure(
                &client,
                "nats echo (baseline)",
                "bench.echo",
                concurrency,
                secs,
                echo_body.clone(),
            )
            .await,
        );
        cases.push(
            measure(
                &client,
                "session.create",
                "session.create",
                concurrency,
                secs,
                create_body.clone(),
            )
            .await,
        );
        cases.push(
            measure(
                &client,
                "session.get",
                "session.get",
                concurrency,
                secs,
                get_body.clone(),
            )
            .await,
        );
    }
    registry.terminate().await;
    cases
}

fn report(cases: &[(bool, Case)]) {
    println!(
        "\n{:<22} {:>5} {:>5} {:>10} {:>10} {:>10} {:>7}",
        "case", "auth", "conc", "req/s", "p50 µs", "p99 µs", "errors"
    );
    for (auth, c) in cases {
        println!(
            "{:<22} {:>5} {:>5} {:>10.0} {:>10} {:>10} {:>7}",
            c.name,
            if *auth { "on" } else { "off" },
            c.concurrency,
            c.rps(),
            c.p50_us,
            c.p99_us,
            c.errors
        );
    }
    // Throughput with auth on as a share of auth off, per case and concurrency.
    let rows: Vec<_> = cases
        .iter()
        .map(|(auth, c)| (*auth, c.name, c.concurrency, c.rps()))
        .collect();
    let cost = relay_testkit::auth_cost(&rows);

    let results: Vec<_> = cases
        .iter()
        .map(|(auth, c)| {
            json!({
                "case": c.name, "auth": auth, "concurrency": c.concurrency, "requests": c.requests, "errors": c.errors,
                "seconds": c.seconds, "throughputPerSec": c.rps().round(), "p50Us": c.p50_us, "p99Us": c.p99_us,
            })
        })
        .collect();
    let doc = json!({
        "benchmark": "registry",
        "command": "make bench",
        "measuredAt": relay_bus::now_ms(),
        "machine": { "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get), "os": std::env::consts::OS },
        "setup": "private nats-server and a fresh Postgres database on loopback; registry release build in its own process; closed-loop callers on one NATS connection; echo responder on a second connection of the bench process; every case with NATS auth on (JWT identities and subject permissions; callers as admin, the registry as itself) and off",
        "results": results,
        "authCost": cost,
    });
    relay_testkit::write_bench_results("registry", &doc);
}

fn uuid_prefix() -> String {
    format!("b{}", relay_bus::now_ms())
}
