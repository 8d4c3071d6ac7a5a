//! `make bench`: the operator console in Debian's chromium (playwright-core, as in the e2e
//! test), against a release-built event log, registry and gateway.
//!
//! 1. First paint, cold (a fresh browser context each run): first contentful paint of the
//!    session page and the time until its first timeline row shows; baseline in the same run,
//!    the first paint of `/healthz` (the browser and HTTP floor, no page script).
//! 2. A live event showing: 1,000 events appended at 100/s to the session the page follows;
//!    each one's lag is from the append request to its row being in the page's DOM. Baseline:
//!    a plain SSE reader on the same stream in this process (the gateway's delivery alone).
//! 3. The page's CPU (main-thread task time per wall second, Chrome's own metrics) while those
//!    events arrive, beside the same page open and idle; its JS heap and DOM nodes after them.
//!
//! Prints a table and writes bench/results/console.json. Needs `make console-deps`.

use futures::StreamExt;
use relay_testkit::{Database, Nats, ServiceProcess, percentile};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const GATEWAY: &str = env!("CARGO_BIN_EXE_gateway");
const EVENTS: usize = 1000;
const RATE: usize = 100;
const HISTORY: usize = 50;
const SESSION: &str = "console-bench";

/// Wall clock, ms with µs precision: the browser's `performance.timeOrigin + now()` is on it.
fn wall_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as f64 / 1000.0
}

/// The i-th event of a busy agent's turn: a turn start, tool calls, output and token usage.
fn event(i: usize) -> Value {
    let (kind, payload) = match i % 10 {
        0 => ("turn.started", json!({"turnNumber": i / 10 + 1})),
        1 | 5 => (
            "tool.called",
            json!({"tool": "Grep", "input": {"pattern": "TODO", "path": format!("services/{i}")}}),
        ),
        2 | 6 => (
            "tool.completed",
            json!({"tool": "Grep", "output": format!("services/gateway/src/rest.rs:{i}: // TODO keep the reply small")}),
        ),
        3 | 7 | 8 => (
            "terminal.output",
            json!({"text": format!("line {i}: compiling relay-mesh v0.1.0 (/work/main)")}),
        ),
        _ => (
            "tokens.used",
            json!({"inputTokens": 1200 + i, "outputTokens": 340, "model": "claude-sonnet-4-5"}),
        ),
    };
    json!({"type": kind, "sessionId": SESSION, "agentName": "bench-agent", "payload": payload})
}

/// Reads the session's SSE stream, noting when each seq arrives (wall ms).
async fn read_sse(
    resp: reqwest::Response,
    until_seq: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> HashMap<u64, f64> {
    let mut arrived = HashMap::new();
    let mut carry = Vec::new();
    let mut body = resp.bytes_stream();
    loop {
        let want = until_seq.load(std::sync::atomic::Ordering::Acquire);
        if want > 0 && arrived.contains_key(&want) {
            return arrived;
        }
        let chunk = match tokio::time::timeout(Duration::from_millis(200), body.next()).await {
            Ok(Some(Ok(c))) => c,
            Ok(_) => return arrived,
            Err(_) => continue,
        };
        let at = wall_ms();
        carry.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(nl) = carry[start..].iter().position(|b| *b == b'\n') {
            if let Some(seq) = carry[start..start + nl]
                .strip_prefix(b"id: ")
                .and_then(|id| std::str::from_utf8(id).ok()?.trim().parse().ok())
            {
                arrived.insert(seq, at);
            }
            start += nl + 1;
        }
        carry.drain(..start);
    }
}

fn lag_stats(sent: &HashMap<u64, f64>, seen: &HashMap<u64, f64>) -> Value {
    let mut lags: Vec<u64> = sent
        .iter()
        .filter_map(|(seq, t)| seen.get(seq).map(|s| ((s - t).max(0.0) * 1000.0) as u64))
        .collect();
    lags.sort_unstable();
    let ms = |us: u64| (us as f64 / 10.0).round() / 100.0;
    json!({
        "events": sent.len(), "shown": lags.len(), "missing": sent.len() - lags.len(),
        "p50Ms": ms(percentile(&lags, 0.50)), "p99Ms": ms(percentile(&lags, 0.99)),
        "maxMs": ms(lags.last().copied().unwrap_or(0)),
    })
}

fn median(v: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = v.collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (chromium, modules) = relay_testkit::console_browser();

    let nats = Nats::start().await;
    let db = Database::create().await;
    let quiet = [("RELAY_TELEMETRY__LOG_LEVEL", "warn")];
    let services: Vec<ServiceProcess> = ["session-registry", "event-ingest"]
        .iter()
        .map(|s| ServiceProcess::spawn(&relay_testkit::bin_path(s), &nats, &db, &quiet))
        .collect();
    let client = nats.client().await;
    for s in ["session-registry", "event-ingest"] {
        relay_testkit::wait_for_instances(&client, s, 1).await;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let key = format!("console-bench-{}", relay_bus::now_ms());
    let _gateway = ServiceProcess::spawn(
        GATEWAY,
        &nats,
        &db,
        &[
            ("RELAY_TELEMETRY__LOG_LEVEL", "warn"),
            ("RELAY_GATEWAY__LISTEN", listen.as_str()),
            ("RELAY_API_TOKEN", key.as_str()),
        ],
    );
    let base = format!("http://{listen}");
    let http = reqwest::Client::new();
    relay_testkit::wait_for(|| async {
        let r = http.get(format!("{base}/readyz")).send().await.ok()?;
        r.status().is_success().then_some(())
    })
    .await;
    relay_testkit::expect_ok(
        &client,
        "session.create",
        json!({"sessionId": SESSION, "title": "console bench"}),
    )
    .await;
    let history: Vec<Value> = (0..HISTORY).map(event).collect();
    relay_testkit::expect_ok(&client, "event.append", json!({ "events": history })).await;

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console/e2e/console.bench.mjs");
    let mut node = tokio::process::Command::new("node")
        .arg(&script)
        .env("BASE", &base)
        .env("KEY", &key)
        .env("SESSION", SESSION)
        .env("PLAYWRIGHT", &modules)
        .env("CHROMIUM", &chromium)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = node.stdin.take().unwrap();
    let mut out = BufReader::new(node.stdout.take().unwrap()).lines();
    let mut next_line = async || {
        tokio::time::timeout(Duration::from_secs(300), out.next_line())
            .await
            .expect("the browser side answers within 5 minutes")
            .unwrap()
            .expect("the browser side ended early (its error is above)")
    };
    assert_eq!(next_line().await, "ready");

    // The baseline reader follows the same session live (no offset: no replay).
    let last = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let request = http
        .get(format!("{base}/api/v1/sessions/{SESSION}/events/sse"))
        .bearer_auth(&key)
        .send();
    let reader = tokio::spawn({
        let last = last.clone();
        async move {
            let resp = request.await.unwrap();
            assert_eq!(resp.status(), 200);
            read_sse(resp, last).await
        }
    });

    eprintln!("console bench: {EVENTS} events at {RATE}/s");
    let mut sent = HashMap::with_capacity(EVENTS);
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / RATE as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    for i in HISTORY..HISTORY + EVENTS {
        tick.tick().await;
        let at = wall_ms();
        let r = relay_testkit::expect_ok(&client, "event.append", json!({ "events": [event(i)] })).await;
        sent.insert(r["appended"][0]["seq"].as_u64().unwrap(), at);
    }
    let (first, final_seq) = (*sent.keys().min().unwrap(), *sent.keys().max().unwrap());
    last.store(final_seq, std::sync::atomic::Ordering::Release);
    stdin
        .write_all(format!("sent {first} {final_seq}\n").as_bytes())
        .await
        .unwrap();
    let line = next_line().await;
    let result: Value = serde_json::from_str(line.strip_prefix("result ").expect("a result line")).unwrap();
    let sse = tokio::time::timeout(Duration::from_secs(30), reader)
        .await
        .expect("the SSE reader ends")
        .unwrap();
    let _ = node.wait().await;
    drop(services);

    let shown: HashMap<u64, f64> = result["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap()))
        .collect();
    let fp = &result["firstPaint"];
    let med = |runs: &Value, field: &str| median(runs.as_array().unwrap().iter().map(|r| r[field].as_f64().unwrap()));
    let (floor_fcp, fcp, row) = (
        med(&fp["floor"], "fcp"),
        med(&fp["sessionPage"], "fcp"),
        med(&fp["sessionPage"], "row"),
    );
    let page_lag = lag_stats(&sent, &shown);
    let sse_lag = lag_stats(&sent, &sse);
    let (idle, load) = (&result["idle"], &result["load"]);
    let mib = |b: &Value| (b.as_f64().unwrap() / 1048576.0 * 10.0).round() / 10.0;

    println!("\n{:<44} {:>10}", "first paint (median of cold runs)", "ms");
    println!(
        "{:<44} {:>10.1}",
        "/healthz (baseline: browser and HTTP floor)", floor_fcp
    );
    println!("{:<44} {:>10.1}", "session page: first contentful paint", fcp);
    println!("{:<44} {:>10.1}", "session page: first timeline row", row);
    println!(
        "\n{:<44} {:>8} {:>8} {:>8} {:>8}",
        "live event, append → shown", "shown", "p50 ms", "p99 ms", "max ms"
    );
    for (name, l) in [
        ("SSE frame at a plain reader (baseline)", &sse_lag),
        ("row in the console's DOM", &page_lag),
    ] {
        let f = |k: &str| l[k].as_f64().unwrap_or(0.0);
        println!(
            "{:<44} {:>8} {:>8.2} {:>8.2} {:>8.2}",
            name,
            l["shown"],
            f("p50Ms"),
            f("p99Ms"),
            f("maxMs")
        );
    }
    println!(
        "\n{:<44} {:>8} {:>8} {:>8} {:>8}",
        "page main thread, share of a core", "task", "script", "layout", "style"
    );
    for (name, c) in [
        ("open and idle (baseline)", idle),
        (&*format!("{EVENTS} events at {RATE}/s"), load),
    ] {
        let pct = |f: &str| format!("{:.1}%", c[f].as_f64().unwrap() * 100.0);
        println!(
            "{:<44} {:>8} {:>8} {:>8} {:>8}",
            name,
            pct("taskShare"),
            pct("scriptShare"),
            pct("layoutShare"),
            pct("styleShare")
        );
    }
    println!(
        "\nJS heap {} → {} MiB, DOM nodes {} → {}, {} rows on the timeline",
        mib(&result["heap"]["beforeBytes"]),
        mib(&result["heap"]["afterBytes"]),
        result["domNodes"]["before"],
        result["domNodes"]["after"],
        result["rows"]
    );

    let doc = json!({
        "benchmark": "console",
        "command": "make bench (cargo bench -p gateway --bench console)",
        "measuredAt": relay_bus::now_ms(),
        "machine": { "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get), "os": std::env::consts::OS },
        "setup": format!("Debian chromium, headless, 1280x800, driven by playwright-core; private nats-server and a fresh Postgres database on loopback; release-built session-registry, event-ingest and gateway; the session page follows a session with {HISTORY} events of history while {EVENTS} more are appended at {RATE}/s, one per event.append request"),
        "firstPaintMs": {
            "runs": fp["sessionPage"].as_array().unwrap().len(),
            "healthzBaselineFcp": floor_fcp, "sessionPageFcp": fcp, "sessionPageFirstRow": row,
            "raw": fp,
        },
        "liveEventLag": { "consoleDom": page_lag, "sseReaderBaseline": sse_lag },
        "pageCpu": { "idleBaseline": idle, "underLoad": load },
        "jsHeapMiB": { "before": mib(&result["heap"]["beforeBytes"]), "after": mib(&result["heap"]["afterBytes"]) },
        "domNodes": result["domNodes"], "timelineRows": result["rows"],
    });
    relay_testkit::write_bench_results("console", &doc);
}
