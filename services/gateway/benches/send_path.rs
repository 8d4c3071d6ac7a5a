//! `make bench`: the whole public send path, REST send → the message typed into an agent's
//! terminal, beside the same sends made straight over NATS (`session.sendMessage`, what the
//! gateway does per request) in the same run. Prints a table and writes
//! bench/results/send_path.json.
//!
//! The mesh is real and release-built, auth on: session-registry, event-ingest, one
//! delivery-runner, an agent-spawner and the gateway on a private nats-server and a fresh
//! database. 20 agents are the fake agent under PTY harnesses (spawned by the spawner), one
//! session each. 20 callers, one per agent, each keep at most WINDOW of their messages
//! undelivered and send again as soon as they may, for RELAY_BENCH_SECONDS (default 5) per case:
//! - accept: the send's request → its reply (the message and its delivery are committed);
//! - end to end: the send's request → the `delivery.delivered` event (the harness typed it in
//!   and the receipt is committed);
//! - throughput: messages delivered per second over the case.
//!
//! Each case also profiles Postgres per message (a private server with pg_stat_statements):
//! statements (one round trip each), transactions, rows written, WAL bytes, and the statements
//! run most often.
//!
//! A third case paces the REST sends at RELAY_BENCH_PACED_RATE messages/s in all (default 200,
//! about half what the mesh delivers flat out on two cores): accept and end to end when the
//! machine is not saturated, so they show the path's own latency rather than the queue for a core.

use futures::StreamExt;
use relay_testkit::{Database, Nats, Postgres, ServiceProcess, SqlProfile, percentile};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

const GATEWAY: &str = env!("CARGO_BIN_EXE_gateway");
const AGENTS: usize = 20;
/// Messages one caller may have sent but not yet delivered.
const WINDOW: usize = 8;

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn stats(mut us: Vec<u64>) -> Value {
    us.sort_unstable();
    json!({ "n": us.len(), "p50Ms": ms(percentile(&us, 0.50)), "p99Ms": ms(percentile(&us, 0.99)) })
}

/// The delivery ids of delivered events and when each arrived.
type Arrivals = Arc<Mutex<HashMap<String, Instant>>>;

#[derive(Clone, Copy, PartialEq)]
enum Path {
    Nats,
    Rest,
}

struct Mesh {
    _nats: Nats,
    /// A private server with `pg_stat_statements`: the profile of each case.
    pg: Postgres,
    db: Database,
    _services: Vec<ServiceProcess>,
    client: async_nats::Client,
    http: reqwest::Client,
    base: String,
    sessions: Vec<String>,
    arrivals: Arrivals,
    /// Notified on each delivered event.
    delivered: Arc<tokio::sync::Notify>,
}

async fn start() -> Mesh {
    let nats = Nats::start().await;
    let pg = Postgres::start_profiled().await;
    let db = Database::create_on(&pg.admin_url).await;
    let client = nats.client().await;
    let quiet = ("RELAY_TELEMETRY__LOG_LEVEL", "warn");
    let mut services = Vec::new();
    for name in ["session-registry", "event-ingest", "delivery-runner"] {
        services.push(ServiceProcess::spawn(
            &relay_testkit::bin_path(name),
            &nats,
            &db,
            &[quiet],
        ));
        relay_testkit::wait_for_instances(&client, name, 1).await;
    }
    let fake = relay_testkit::bin_path("fake-agent");
    let config = std::env::temp_dir().join(format!("bench-send-path-{}.toml", uuid::Uuid::new_v4().simple()));
    std::fs::write(
        &config,
        format!(
            "[spawner]\nmax_agents = {AGENTS}\n\n[spawner.commands]\nfake = [{fake:?}, \"--style\", \"generic\"]\n"
        ),
    )
    .unwrap();
    services.push(ServiceProcess::spawn(
        &relay_testkit::bin_path("agent-spawner"),
        &nats,
        &db,
        &[("RELAY_CONFIG", config.to_str().unwrap()), quiet],
    ));
    relay_testkit::wait_for_instances(&client, "agent-spawner", 1).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    services.push(ServiceProcess::spawn(
        GATEWAY,
        &nats,
        &db,
        &[
            quiet,
            ("RELAY_GATEWAY__LISTEN", listen.as_str()),
            ("RELAY_API_TOKEN", ""),
            ("RELAY_GATEWAY__OPEN", "true"),
        ],
    ));
    let base = format!("http://{listen}");
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .build()
        .unwrap();
    relay_testkit::wait_for(|| async {
        let r = http.get(format!("{base}/readyz")).send().await.ok()?;
        r.status().is_success().then_some(())
    })
    .await;

    let arrivals: Arrivals = Arc::default();
    let delivered = Arc::new(tokio::sync::Notify::new());
    let mut sub = client.subscribe("delivery.delivered").await.unwrap();
    let (seen, wake) = (arrivals.clone(), delivered.clone());
    tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let e: Value = serde_json::from_slice(&m.payload).unwrap_or_default();
            if let Some(id) = e["deliveryId"].as_str() {
                seen.lock().unwrap().insert(id.to_string(), Instant::now());
                wake.notify_waiters();
            }
        }
    });

    let mut sessions = Vec::new();
    for _ in 0..AGENTS {
        let s = relay_testkit::call_json(&client, "session.create", json!({}))
            .await
            .unwrap();
        let session = s["sessionId"].as_str().unwrap().to_string();
        relay_testkit::call_json(&client, "agent.spawn", json!({"sessionId": session, "cli": "fake"}))
            .await
            .unwrap();
        sessions.push(session);
    }
    Mesh {
        _nats: nats,
        pg,
        db,
        _services: services,
        client,
        http,
        base,
        sessions,
        arrivals,
        delivered,
    }
}

impl Mesh {
    /// One send; (delivery id, µs to the reply).
    async fn send(&self, path: Path, session: &str, text: String) -> (String, u64) {
        let started = Instant::now();
        let reply: Value = match path {
            Path::Nats => {
                let req = json!({"sessionId": session, "message": text, "delivery": {"mode": "immediate"}});
                relay_testkit::call_json(&self.client, "session.sendMessage", req)
                    .await
                    .unwrap()
            }
            Path::Rest => {
                let url = format!("{}/api/v1/sessions/{session}/messages", self.base);
                let body = json!({"message": text, "mode": "immediate"});
                let resp = self.http.post(url).json(&body).send().await.unwrap();
                assert!(resp.status().is_success(), "REST send: {}", resp.status());
                resp.json().await.unwrap()
            }
        };
        let id = reply["deliveryIds"][0]
            .as_str()
            .map_or_else(|| panic!("no delivery id: {reply}"), String::from);
        (id, started.elapsed().as_micros() as u64)
    }

    /// Every caller sends for `secs`; then waits until all were delivered.
    async fn case(self: &Arc<Self>, path: Path, secs: f64) -> Value {
        self.run(path, secs, None).await
    }

    /// Like `case`, each caller sending one message every `every` (a fixed rate) rather than
    /// as soon as its window allows; a send that falls behind goes at once.
    async fn paced(self: &Arc<Self>, path: Path, secs: f64, rate: f64) -> Value {
        let every = Duration::from_secs_f64(self.sessions.len() as f64 / rate);
        self.run(path, secs, Some(every)).await
    }

    async fn run(self: &Arc<Self>, path: Path, secs: f64, every: Option<Duration>) -> Value {
        let sql = SqlProfile::start(&self.pg, &self.db).await;
        let (cpu_before, read_at) = (relay_testkit::cpu_reading(), Instant::now());
        let stop_at = Instant::now() + Duration::from_secs_f64(secs);
        let t0 = Instant::now();
        let mut callers = Vec::new();
        for (i, session) in self.sessions.iter().enumerate() {
            let (mesh, session) = (self.clone(), session.clone());
            callers.push(tokio::spawn(async move {
                let window = Arc::new(Semaphore::new(WINDOW));
                let mut sent = Vec::new();
                let mut n = 0;
                // Callers start spread over one interval, not all at once.
                let mut next = every.map(|e| Instant::now() + e.mul_f64(i as f64 / AGENTS as f64));
                while Instant::now() < stop_at {
                    if let (Some(at), Some(e)) = (next.as_mut(), every) {
                        tokio::time::sleep_until((*at).into()).await;
                        *at += e;
                    }
                    let permit = window.clone().acquire_owned().await.unwrap();
                    let started = Instant::now();
                    let (id, accept) = mesh.send(path, &session, format!("m{i}-{n}")).await;
                    n += 1;
                    // The permit comes back when this message is delivered.
                    let (mesh2, id2) = (mesh.clone(), id.clone());
                    tokio::spawn(async move {
                        mesh2.wait_delivered(&id2).await;
                        drop(permit);
                    });
                    sent.push((id, started, accept));
                }
                sent
            }));
        }
        let mut sent = Vec::new();
        for c in callers {
            sent.extend(c.await.unwrap());
        }
        for (id, _, _) in &sent {
            self.wait_delivered(id).await;
        }
        let arrivals = self.arrivals.lock().unwrap().clone();
        let last = sent
            .iter()
            .filter_map(|(id, _, _)| arrivals.get(id))
            .max()
            .copied()
            .unwrap_or(t0);
        let accept: Vec<u64> = sent.iter().map(|s| s.2).collect();
        let e2e: Vec<u64> = sent
            .iter()
            .filter_map(|(id, at, _)| arrivals.get(id).map(|d| d.duration_since(*at).as_micros() as u64))
            .collect();
        // Where the CPU went: ms of CPU per message, by program, the largest first; and how many
        // cores were busy in all between the readings (at most the machine's, a check on them).
        let used = relay_testkit::cpu_reading().used_since(&cpu_before);
        let cores_busy = used.values().sum::<f64>() / read_at.elapsed().as_secs_f64();
        let cpu = relay_testkit::cpu_ms_per_message(&used, sent.len());
        let elapsed = last.duration_since(t0).as_secs_f64();
        let sql = sql.read(sent.len(), 10).await;
        json!({
            "sqlPerMessage": sql,
            "messages": sent.len(),
            "deliveredPerSec": (sent.len() as f64 / elapsed).round(),
            "acceptMs": stats(accept),
            "endToEndMs": stats(e2e),
            "cpuMsPerMessage": cpu.iter().map(|(n, ms)| json!({"program": n, "ms": (ms * 100.0).round() / 100.0})).collect::<Vec<_>>(),
            "cpuMsPerMessageTotal": (cpu.iter().map(|c| c.1).sum::<f64>() * 100.0).round() / 100.0,
            "coresBusy": (cores_busy * 100.0).round() / 100.0,
        })
    }

    async fn wait_delivered(&self, id: &str) {
        loop {
            let notified = self.delivered.notified();
            if self.arrivals.lock().unwrap().contains_key(id) {
                return;
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), notified).await;
        }
    }
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::var("RELAY_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5.0);
    let mesh = Arc::new(start().await);
    // Warm-up: each agent takes one message both ways.
    mesh.case(Path::Nats, 0.3).await;
    mesh.case(Path::Rest, 0.3).await;
    let rate: f64 = std::env::var("RELAY_BENCH_PACED_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200.0);
    // The mesh at rest: what it burns with nothing to deliver (20 harnesses, timers, sweeps).
    let (before, at) = (relay_testkit::cpu_reading(), Instant::now());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let idle = relay_testkit::cpu_reading().used_since(&before).values().sum::<f64>() / at.elapsed().as_secs_f64();
    let nats = mesh.case(Path::Nats, secs).await;
    let rest = mesh.case(Path::Rest, secs).await;
    let paced = mesh.paced(Path::Rest, secs, rate).await;
    let doc = json!({
        "agents": AGENTS, "callers": AGENTS, "windowPerCaller": WINDOW, "seconds": secs,
        "natsSessionSendMessage": nats, "restSessionMessages": rest,
        "pacedRate": rate, "restSessionMessagesPaced": paced, "idleCoresBusy": (idle * 100.0).round() / 100.0,
    });
    println!("send path: {AGENTS} agents under PTY harnesses (fake agent), {AGENTS} callers, {secs} s per case");
    println!("| path | delivered/s | accept p50 | accept p99 | end to end p50 | end to end p99 |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    let paced_name = format!("POST /api/v1/sessions/{{id}}/messages, paced at {rate}/s");
    for (name, v) in [
        ("session.sendMessage over NATS (baseline)", &nats),
        ("POST /api/v1/sessions/{id}/messages", &rest),
        (paced_name.as_str(), &paced),
    ] {
        println!(
            "| {name} | {} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms |",
            v["deliveredPerSec"],
            v["acceptMs"]["p50Ms"].as_f64().unwrap_or_default(),
            v["acceptMs"]["p99Ms"].as_f64().unwrap_or_default(),
            v["endToEndMs"]["p50Ms"].as_f64().unwrap_or_default(),
            v["endToEndMs"]["p99Ms"].as_f64().unwrap_or_default()
        );
    }
    for (name, v) in [("over NATS", &nats), ("over REST", &rest), ("over REST, paced", &paced)] {
        let parts: Vec<String> = v["cpuMsPerMessage"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {}", c["program"].as_str().unwrap_or(""), c["ms"]))
            .collect();
        println!(
            "CPU ms per message {name}: {} in all ({} cores busy); {}",
            v["cpuMsPerMessageTotal"],
            v["coresBusy"],
            parts.join(", ")
        );
    }
    for (name, v) in [("over NATS", &nats), ("over REST", &rest), ("over REST, paced", &paced)] {
        println!(
            "Postgres per message {name}: {}",
            SqlProfile::summary(&v["sqlPerMessage"])
        );
    }
    println!("the statements run most often, per message (over NATS):");
    for line in SqlProfile::top_lines(&nats["sqlPerMessage"]) {
        println!("{line}");
    }
    println!("at rest, between the cases: {idle:.2} cores busy");
    relay_testkit::write_bench_results("send_path", &doc);
}
