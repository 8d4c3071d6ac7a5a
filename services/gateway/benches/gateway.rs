//! `make bench`: the gateway in front of a real, release-built event log and registry.
//!
//! 1. SSE fan-out: N clients follow `/api/v1/events/sse` while events are appended at a fixed
//!    rate; each delivery's lag is the time from the append request to the frame's arrival.
//!    Baselines in the same run, N NATS subscribers each: messages of the same size published
//!    straight to a subject (NATS's own fan-out), and `event.committed.>` while the same events
//!    are appended (the log's commit and publish: everything but the gateway).
//!    Memory per connection is the gateway's RSS growth with N idle streams open, over N.
//! 2. Per-session fan-out (the web-app case): N clients each follow their own session
//!    (`/api/v1/sessions/{id}/events/sse`) while the same total rate is appended, spread
//!    round-robin over the N sessions (every session gets at least one event). Baselines in the
//!    same run: N NATS subscribers each on its own subject with messages of the same size
//!    published round-robin (NATS's own per-subject routing), and one subscriber of
//!    `event.committed.>` while the same events are appended (the gateway's input: its hub is
//!    that one subscriber).
//! 2. REST: `GET /api/v1/sessions/{id}` in a closed loop at 1 and 32 concurrent callers, beside
//!    `session.get` straight over NATS (what the gateway itself does per request) and
//!    `GET /healthz` (the HTTP floor: no bus call).
//!
//! Prints tables and writes bench/results/gateway.json. RELAY_BENCH_SECONDS sets the load time
//! per case (default 3 for REST; the fan-out runs 3× as long); RELAY_BENCH_CLIENTS overrides the
//! fan-out sizes (default "100,1000"); RELAY_BENCH_SESSION_CLIENTS the per-session sizes
//! (default "10000"); RELAY_BENCH_RATE the events per second (default 1000); RELAY_BENCH_ONLY
//! picks parts, comma-separated, of `fanout`, `sessions` and `rest` (default all three; the
//! whole run takes about 4 minutes).

use futures::StreamExt;
use relay_testkit::{Database, Nats, ServiceProcess, percentile};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const GATEWAY: &str = env!("CARGO_BIN_EXE_gateway");
/// Events per append request (and NATS messages per publish burst): 100 bursts a second.
const BATCH: usize = 10;
const SESSIONS: u64 = 1000;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Raises this process's open-file limit to its hard limit: 10,000 SSE clients are 10,000
/// sockets here, and the gateway (spawned from here, so it inherits the limit) holds as many.
fn raise_nofile() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
    getrlimit(Resource::RLIMIT_NOFILE).map_or(0, |(soft, _)| soft)
}

/// The gateway's own pid when it runs under a wrapper (the wrapper's last descendant).
fn leaf(mut pid: u32) -> u32 {
    while let Some(child) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .ok()
        .and_then(|c| c.split_whitespace().last().and_then(|c| c.parse().ok()))
    {
        pid = child;
    }
    pid
}

/// What one fan-out case measured.
struct Fanout {
    case: &'static str,
    clients: usize,
    rate: usize,
    seconds: f64,
    expected: usize,
    delivered: usize,
    lag_p50_us: u64,
    lag_p99_us: u64,
    lag_max_us: u64,
    /// Gateway RSS growth per idle open stream (SSE only).
    kib_per_conn: Option<f64>,
    /// Gateway RSS before the streams opened and with them open, idle.
    rss_before_kib: Option<u64>,
    rss_idle_kib: Option<u64>,
    peak_rss_kib: Option<u64>,
    /// Frames a client got that were not for it (another session's events).
    foreign: usize,
    /// Gateway counters over the case: clients caught up from the log, hub gap fills.
    catch_ups: Option<f64>,
    gap_fills: Option<f64>,
}

impl Fanout {
    fn json(&self) -> Value {
        json!({
            "case": self.case, "clients": self.clients, "eventsPerSec": self.rate, "seconds": self.seconds,
            "expectedDeliveries": self.expected, "delivered": self.delivered,
            "lost": self.expected.saturating_sub(self.delivered),
            "lagP50Ms": self.lag_p50_us as f64 / 1000.0, "lagP99Ms": self.lag_p99_us as f64 / 1000.0,
            "lagMaxMs": self.lag_max_us as f64 / 1000.0,
            "gatewayKiBPerConnection": self.kib_per_conn.map(|k| (k * 10.0).round() / 10.0),
            "gatewayRssBeforeKiB": self.rss_before_kib, "gatewayRssIdleKiB": self.rss_idle_kib,
            "gatewayPeakRssKiB": self.peak_rss_kib, "foreignDeliveries": self.foreign,
            "catchUpsFromLog": self.catch_ups, "hubGapFills": self.gap_fills,
        })
    }
}

/// Receipts of one client: (event index, µs since t0).
type Receipts = Vec<(u32, u32)>;

/// Lags from send times (index → µs since t0) and every client's receipts.
fn lags(sent: &HashMap<u32, u32>, receipts: &[Receipts]) -> (usize, Vec<u64>) {
    let mut lags = Vec::new();
    for r in receipts {
        for (idx, at) in r {
            if let Some(t) = sent.get(idx) {
                lags.push(at.saturating_sub(*t) as u64);
            }
        }
    }
    lags.sort_unstable();
    (lags.len(), lags)
}

/// The load of one fan-out case: `total` events at `rate`, on one session or spread over many.
#[derive(Clone)]
struct Load {
    total: usize,
    rate: usize,
    /// Per-session cases: a run prefix and the number of sessions (one per client); event `i`
    /// belongs to session `i % n`.
    sessions: Option<(Arc<str>, usize)>,
}

impl Load {
    /// Every client follows every event.
    fn all(rate: usize, secs: f64) -> Load {
        Load {
            total: (rate as f64 * secs) as usize / BATCH * BATCH,
            rate,
            sessions: None,
        }
    }

    /// Events spread round-robin over `n` sessions, at least one per session.
    fn per_session(rate: usize, secs: f64, n: usize) -> Load {
        let per = ((rate as f64 * secs) as usize).div_ceil(n).max(1);
        Load {
            total: (per * n).div_ceil(BATCH) * BATCH,
            rate,
            sessions: Some((format!("fan{}", relay_bus::now_ms()).into(), n)),
        }
    }

    fn secs(&self) -> f64 {
        self.total as f64 / self.rate as f64
    }

    fn session(&self, idx: usize) -> String {
        match &self.sessions {
            Some((run, n)) => format!("{run}-{}", idx % n),
            None => "bench".into(),
        }
    }

    /// The events client (or subscriber) `i` of a per-session case should get; all of them
    /// otherwise.
    fn want(&self, i: usize) -> usize {
        match &self.sessions {
            Some((_, n)) => self.total / n + usize::from(i < self.total % n),
            None => self.total,
        }
    }

    /// Whether event `idx` is client `i`'s.
    fn owns(&self, i: usize, idx: usize) -> bool {
        self.sessions.as_ref().is_none_or(|(_, n)| idx % n == i)
    }
}

type Stop = tokio::sync::watch::Receiver<bool>;

/// Reads an SSE body, recording the arrival of every `id:` line (the event seq), until it has
/// `want` of client `me`'s events or `stop`.
#[allow(clippy::too_many_arguments)]
async fn read_sse(
    resp: reqwest::Response,
    t0: Instant,
    first_seq: Arc<AtomicU64>,
    load: Load,
    me: usize,
    mut stop: Stop,
    foreign: Arc<AtomicUsize>,
) -> Receipts {
    let want = load.want(me);
    let mut receipts = Receipts::with_capacity(want.min(1 << 16));
    let mut carry: Vec<u8> = Vec::new();
    let mut body = resp.bytes_stream();
    while receipts.len() < want {
        // Waits for a frame or the stop (no polling: 10,000 idle readers must cost nothing).
        let chunk = tokio::select! {
            c = body.next() => match c {
                Some(Ok(c)) => c,
                _ => break,
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        let at = t0.elapsed().as_micros() as u32;
        carry.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(nl) = carry[start..].iter().position(|b| *b == b'\n') {
            let line = &carry[start..start + nl];
            if let Some(id) = line.strip_prefix(b"id: ")
                && let Some(seq) = std::str::from_utf8(id).ok().and_then(|s| s.parse::<u64>().ok())
            {
                let first = first_seq.load(Ordering::Acquire);
                if first > 0 && seq >= first {
                    let idx = (seq - first) as usize;
                    if load.owns(me, idx) {
                        receipts.push((idx as u32, at));
                    } else {
                        foreign.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            start += nl + 1;
        }
        carry.drain(..start);
    }
    receipts
}

fn event_body(idx: usize, session: &str) -> Value {
    // About the size of a typical tool event: ~300 bytes of JSON per frame.
    json!({"type": "bench.tick", "sessionId": session, "agentName": "bench-agent",
           "payload": {"i": idx, "tool": "Grep", "args": "pattern=TODO path=services/ include=*.rs", "note": "x".repeat(120)}})
}

/// Streams opening at once: 10,000 connects in one go would overflow the listen backlog.
const OPENING: usize = 256;

/// N SSE clients on the gateway while the load is appended: all following the whole log, or
/// each its own session.
async fn sse_fanout(mesh: &BenchMesh, clients: usize, load: Load) -> Fanout {
    let (http, base) = (&mesh.http, mesh.base.as_str());
    let gateway_pid = leaf(mesh.gateway.pid());
    // The previous case's streams must be gone (the connection cap counts them).
    relay_testkit::wait_for(|| async {
        (metric(http, base, "relay_gateway_sse_connections").await == 0.0).then_some(())
    })
    .await;
    let t0 = Instant::now();
    let first_seq = Arc::new(AtomicU64::new(0));
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let ready = Arc::new(AtomicUsize::new(0));
    let foreign = Arc::new(AtomicUsize::new(0));
    let opening = Arc::new(tokio::sync::Semaphore::new(OPENING));
    let rss_before = relay_testkit::rss_kib(gateway_pid);
    let catch_ups = metric(http, base, "relay_gateway_sse_catch_ups_total").await;
    let gap_fills = metric(http, base, "relay_gateway_hub_gap_fills_total").await;
    let mut tasks = Vec::new();
    for me in 0..clients {
        let url = match &load.sessions {
            Some(_) => format!("{base}/api/v1/sessions/{}/events/sse", load.session(me)),
            None => format!("{base}/api/v1/events/sse"),
        };
        let http = http.clone();
        let (first_seq, stop, ready, foreign, load, opening) = (
            first_seq.clone(),
            stop.clone(),
            ready.clone(),
            foreign.clone(),
            load.clone(),
            opening.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let permit = opening.acquire_owned().await.unwrap();
            let resp = http.get(url).send().await.expect("SSE request");
            assert_eq!(resp.status(), 200, "SSE stream refused");
            drop(permit);
            ready.fetch_add(1, Ordering::Release);
            read_sse(resp, t0, first_seq, load, me, stop, foreign).await
        }));
    }
    while ready.load(Ordering::Acquire) < clients {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let opened = t0.elapsed();
    // Let every client task reach the hub before the first event.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let rss_idle = relay_testkit::rss_kib(gateway_pid);
    eprintln!(
        "  {clients} SSE streams open in {:.1} s; gateway RSS {rss_before} → {rss_idle} KiB ({:.1} KiB/stream); {} events at {}/s",
        opened.as_secs_f64(),
        rss_idle.saturating_sub(rss_before) as f64 / clients as f64,
        load.total,
        load.rate
    );

    let peak = Arc::new(AtomicU64::new(rss_idle));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !*stop.borrow() {
                peak.fetch_max(relay_testkit::rss_kib(gateway_pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let sent = append_at_rate(&mesh.client, &first_seq, &load, t0).await;
    let sampler = Some((sampler, peak, rss_before, rss_idle));
    let case = match load.sessions {
        Some(_) => "sse per session",
        None => "sse via gateway",
    };
    let mut f = finish(tasks, stop_tx, sampler, case, clients, &load, &sent).await;
    f.foreign = foreign.load(Ordering::Relaxed);
    f.catch_ups = Some(metric(http, base, "relay_gateway_sse_catch_ups_total").await - catch_ups);
    f.gap_fills = Some(metric(http, base, "relay_gateway_hub_gap_fills_total").await - gap_fills);
    f
}

/// Where the NATS baselines' subscribers read from.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// Messages published straight to a subject: NATS's own fan-out. In a per-session case
    /// each subscriber has its own subject and each message goes to its session's.
    Raw,
    /// `event.committed.>` while events are appended: the gateway's input, without the gateway.
    Log,
}

/// The baselines: the same fan-out by NATS itself, N subscribers on 10 connections.
async fn nats_fanout(nats: &Nats, log: &async_nats::Client, source: Source, clients: usize, load: Load) -> Fanout {
    let t0 = Instant::now();
    let total = load.total;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let first_seq = Arc::new(AtomicU64::new(0));
    let subject = |i: usize| match (source, &load.sessions) {
        (Source::Raw, Some(_)) => format!("bench.session.{clients}.{i}"),
        (Source::Raw, None) => format!("bench.fanout.{clients}"),
        (Source::Log, _) => "event.committed.>".to_string(),
    };
    let mut conns = Vec::new();
    for _ in 0..10.min(clients) {
        conns.push(nats.client().await);
    }
    let mut tasks = Vec::new();
    for i in 0..clients {
        let mut sub = conns[i % conns.len()].subscribe(subject(i)).await.unwrap();
        let (mut stop, first_seq) = (stop.clone(), first_seq.clone());
        // The log baseline's one subscriber is the gateway's hub: it gets every event.
        let want = if source == Source::Log { total } else { load.want(i) };
        tasks.push(tokio::spawn(async move {
            #[derive(serde::Deserialize)]
            struct Seq {
                seq: u64,
            }
            let mut receipts = Receipts::with_capacity(want.min(1 << 16));
            while receipts.len() < want {
                let msg = tokio::select! {
                    m = sub.next() => match m {
                        Some(m) => m,
                        None => break,
                    },
                    _ = stop.wait_for(|s| *s) => break,
                };
                let at = t0.elapsed().as_micros() as u32;
                let idx = match source {
                    Source::Raw => u32::from_le_bytes(msg.payload[..4].try_into().unwrap()),
                    Source::Log => match serde_json::from_slice::<Seq>(&msg.payload) {
                        Ok(e) if e.seq >= first_seq.load(Ordering::Acquire) => {
                            (e.seq - first_seq.load(Ordering::Acquire)) as u32
                        }
                        _ => continue,
                    },
                };
                receipts.push((idx, at));
            }
            receipts
        }));
    }
    for c in &conns {
        c.flush().await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let publisher = nats.client().await;
    let size = serde_json::to_vec(&event_body(0, &load.session(0))).unwrap().len() + 150; // + the log's envelope
    let (case, sent) = match source {
        Source::Raw => {
            let sent = produce(total, load.rate, t0, |batch_start| {
                let publisher = publisher.clone();
                let subjects: Vec<String> = (batch_start..batch_start + BATCH)
                    .map(|idx| subject(idx % clients))
                    .collect();
                async move {
                    for (idx, subject) in (batch_start..).zip(subjects) {
                        let mut payload = vec![b'x'; size];
                        payload[..4].copy_from_slice(&(idx as u32).to_le_bytes());
                        publisher.publish(subject, payload.into()).await.unwrap();
                    }
                    publisher.flush().await.unwrap();
                }
            })
            .await;
            let case = match load.sessions {
                Some(_) => "nats subject per client",
                None => "nats publish fan-out",
            };
            (case, sent)
        }
        Source::Log => (
            "event.committed over nats",
            append_at_rate(log, &first_seq, &load, t0).await,
        ),
    };
    let mut f = finish(tasks, stop_tx, None, case, clients, &load, &sent).await;
    if source == Source::Log {
        f.expected = total * clients;
    }
    f
}

/// Appends the load's events at its rate; `first_seq` is set to the seq the first one will get.
async fn append_at_rate(
    nats: &async_nats::Client,
    first_seq: &AtomicU64,
    load: &Load,
    t0: Instant,
) -> HashMap<u32, u32> {
    // Only this producer appends, so event i of the run has seq head + 1 + i.
    let head = relay_testkit::expect_ok(nats, "event.since", json!({"seq": 0, "limit": 1})).await["headSeq"]
        .as_u64()
        .unwrap();
    first_seq.store(head + 1, Ordering::Release);
    produce(load.total, load.rate, t0, |batch_start| {
        let nats = nats.clone();
        let events: Vec<Value> = (batch_start..batch_start + BATCH)
            .map(|idx| event_body(idx, &load.session(idx)))
            .collect();
        async move {
            relay_testkit::expect_ok(&nats, "event.append", json!({ "events": events })).await;
        }
    })
    .await
}

/// Sends `total` items in bursts of BATCH, `rate` per second; returns index → send time (µs).
async fn produce<F, Fut>(total: usize, rate: usize, t0: Instant, send: F) -> HashMap<u32, u32>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let sent = Arc::new(Mutex::new(HashMap::with_capacity(total)));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(BATCH as f64 / rate as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    for batch_start in (0..total).step_by(BATCH) {
        tick.tick().await;
        let at = t0.elapsed().as_micros() as u32;
        {
            let mut s = sent.lock().unwrap();
            for idx in batch_start..batch_start + BATCH {
                s.insert(idx as u32, at);
            }
        }
        // One burst at a time, so the log's seq order is the index order.
        send(batch_start).await;
    }
    Arc::try_unwrap(sent).unwrap().into_inner().unwrap()
}

type Sampler = (tokio::task::JoinHandle<()>, Arc<AtomicU64>, u64, u64);

async fn finish(
    tasks: Vec<tokio::task::JoinHandle<Receipts>>,
    stop: tokio::sync::watch::Sender<bool>,
    sampler: Option<Sampler>,
    case: &'static str,
    clients: usize,
    load: &Load,
    sent: &HashMap<u32, u32>,
) -> Fanout {
    // Grace for the tail: clients stop once they have everything, or after 15 s.
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline && !tasks.iter().all(tokio::task::JoinHandle::is_finished) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.send_replace(true);
    let mut receipts = Vec::new();
    for t in tasks {
        receipts.push(t.await.expect("client"));
    }
    let (delivered, lag) = lags(sent, &receipts);
    let (kib_per_conn, rss_before_kib, rss_idle_kib, peak_rss_kib) = match sampler {
        Some((handle, peak, before, idle)) => {
            handle.await.unwrap();
            (
                Some(idle.saturating_sub(before) as f64 / clients as f64),
                Some(before),
                Some(idle),
                Some(peak.load(Ordering::Relaxed)),
            )
        }
        None => (None, None, None, None),
    };
    let expected = match load.sessions {
        // Each event goes to its session's one client.
        Some(_) => load.total,
        None => load.total * clients,
    };
    Fanout {
        case,
        clients,
        rate: load.rate,
        seconds: load.secs(),
        expected,
        delivered,
        lag_p50_us: percentile(&lag, 0.50),
        lag_p99_us: percentile(&lag, 0.99),
        lag_max_us: lag.last().copied().unwrap_or(0),
        kib_per_conn,
        rss_before_kib,
        rss_idle_kib,
        peak_rss_kib,
        foreign: 0,
        catch_ups: None,
        gap_fills: None,
    }
}

/// A counter of the gateway's /metrics.
async fn metric(http: &reqwest::Client, base: &str, name: &str) -> f64 {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    relay_testkit::metric_value(&text, name)
}

struct Rest {
    case: &'static str,
    concurrency: usize,
    requests: usize,
    errors: usize,
    seconds: f64,
    p50_us: u64,
    p99_us: u64,
}

impl Rest {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

/// A registry, an event log and a gateway on a private NATS (auth on or off) and database.
struct BenchMesh {
    nats: Nats,
    _db: Database,
    _services: Vec<ServiceProcess>,
    gateway: ServiceProcess,
    client: async_nats::Client,
    http: reqwest::Client,
    base: String,
}

impl BenchMesh {
    async fn start(auth: bool) -> BenchMesh {
        let nats = if auth {
            Nats::start().await
        } else {
            Nats::start_without_auth().await
        };
        let db = Database::create().await;
        let quiet = [("RELAY_TELEMETRY__LOG_LEVEL", "warn")];
        let registry = ServiceProcess::spawn(
            &relay_testkit::bin_path("session-registry"),
            &nats,
            &db,
            &[
                ("RELAY_TELEMETRY__LOG_LEVEL", "warn"),
                ("RELAY_REGISTRY__FORWARD_EVENTS", "false"),
            ],
        );
        let ingest = ServiceProcess::spawn(&relay_testkit::bin_path("event-ingest"), &nats, &db, &quiet);
        let client = nats.client().await;
        relay_testkit::wait_for_instances(&client, "session-registry", 1).await;
        relay_testkit::wait_for_instances(&client, "event-ingest", 1).await;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen = format!("127.0.0.1:{port}");
        let env = [
            ("RELAY_TELEMETRY__LOG_LEVEL", "warn"),
            ("RELAY_GATEWAY__LISTEN", listen.as_str()),
            ("RELAY_API_TOKEN", ""),
            ("RELAY_GATEWAY__OPEN", "true"),
        ];
        // RELAY_BENCH_GATEWAY_WRAP runs the gateway under a tool (`heaptrack -o /tmp/gw`,
        // `valgrind --tool=massif`): where its memory goes, allocation by allocation.
        let gateway = match std::env::var("RELAY_BENCH_GATEWAY_WRAP") {
            Ok(wrap) if !wrap.trim().is_empty() => {
                let mut words: Vec<&str> = wrap.split_whitespace().collect();
                let tool = words.remove(0);
                words.push(GATEWAY);
                ServiceProcess::spawn_with_args(tool, &words, &nats, &db, &env)
            }
            _ => ServiceProcess::spawn(GATEWAY, &nats, &db, &env),
        };
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
        BenchMesh {
            nats,
            _db: db,
            _services: vec![registry, ingest],
            gateway,
            client,
            http,
            base,
        }
    }

    /// REST against a seeded registry, each case beside its floors.
    async fn rest(&self, secs: f64) -> Vec<Rest> {
        let (client, http, base) = (&self.client, &self.http, &self.base);
        let run = format!("b{}", relay_bus::now_ms());
        for i in 0..SESSIONS {
            relay_testkit::expect_ok(
                client,
                "session.create",
                json!({"sessionId": format!("{run}-{i}"), "title": "bench"}),
            )
            .await;
        }
        let health: Call = {
            let (http, url) = (http.clone(), format!("{base}/healthz"));
            Arc::new(move |_| {
                let (http, url) = (http.clone(), url.clone());
                Box::pin(async move { http.get(url).send().await.is_ok_and(|r| r.status().is_success()) })
            })
        };
        let bus: Call = {
            let (nats, run) = (client.clone(), run.clone());
            Arc::new(move |n| {
                let (nats, body) = (nats.clone(), json!({"sessionId": format!("{run}-{}", n % SESSIONS)}));
                Box::pin(async move { relay_testkit::call_json(&nats, "session.get", body).await.is_ok() })
            })
        };
        let rest: Call = {
            let (http, base, run) = (http.clone(), base.clone(), run.clone());
            Arc::new(move |n| {
                let (http, url) = (http.clone(), format!("{base}/api/v1/sessions/{run}-{}", n % SESSIONS));
                Box::pin(async move { http.get(url).send().await.is_ok_and(|r| r.status().is_success()) })
            })
        };
        let mut rests = Vec::new();
        for concurrency in [1, 32] {
            rests.push(closed_loop("GET /healthz (HTTP floor)", concurrency, secs, health.clone()).await);
            rests.push(closed_loop("session.get over NATS (baseline)", concurrency, secs, bus.clone()).await);
            rests.push(closed_loop("GET /api/v1/sessions/{id}", concurrency, secs, rest.clone()).await);
        }
        rests
    }
}

type Call = Arc<dyn Fn(u64) -> futures::future::BoxFuture<'static, bool> + Send + Sync>;

/// `concurrency` callers in a closed loop for `secs` after 0.5 s of warm-up.
async fn closed_loop(case: &'static str, concurrency: usize, secs: f64, call: Call) -> Rest {
    static N: AtomicU64 = AtomicU64::new(0);
    let start = Instant::now();
    let from = start + Duration::from_millis(500);
    let end = from + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors) = (Vec::new(), 0usize);
            loop {
                let now = Instant::now();
                if now >= end {
                    break;
                }
                let ok = call(N.fetch_add(1, Ordering::Relaxed)).await;
                if now >= from {
                    lat.push(now.elapsed().as_micros() as u64);
                    errors += (!ok) as usize;
                }
            }
            (lat, errors)
        }));
    }
    let (mut lat, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (l, e) = t.await.unwrap();
        lat.extend(l);
        errors += e;
    }
    lat.sort_unstable();
    Rest {
        case,
        concurrency,
        requests: lat.len(),
        errors,
        seconds: secs,
        p50_us: percentile(&lat, 0.50),
        p99_us: percentile(&lat, 0.99),
    }
}

#[tokio::main]
async fn main() {
    let secs: f64 = env_or("RELAY_BENCH_SECONDS", 3.0);
    const REST_ROUNDS: usize = 2;
    let rate: usize = env_or("RELAY_BENCH_RATE", 1000);
    let sizes: Vec<usize> = std::env::var("RELAY_BENCH_CLIENTS")
        .unwrap_or_else(|_| "100,1000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let session_sizes: Vec<usize> = std::env::var("RELAY_BENCH_SESSION_CLIENTS")
        .unwrap_or_else(|_| "10000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let only = std::env::var("RELAY_BENCH_ONLY").unwrap_or_else(|_| "fanout,sessions,rest".into());
    let part = |name: &str| only.split(',').any(|p| p.trim() == name);
    let nofile = raise_nofile();
    let most = sizes.iter().chain(&session_sizes).max().copied().unwrap_or(0);
    assert!(
        nofile as usize > most + 512,
        "RLIMIT_NOFILE is {nofile}: too few for {most} SSE clients"
    );

    // Auth on (the default): fan-out and REST. Then REST again with auth off, in the same run,
    // for what the boundary costs.
    let on = BenchMesh::start(true).await;
    // 1. Fan-out, each size beside its NATS baseline.
    let fan_secs = secs * 3.0;
    let mut fanouts = Vec::new();
    for &clients in sizes.iter().filter(|_| part("fanout")) {
        eprintln!("fan-out: {clients} clients, {rate} events/s for {fan_secs} s");
        let load = Load::all(rate, fan_secs);
        fanouts.push(nats_fanout(&on.nats, &on.client, Source::Raw, clients, load.clone()).await);
        fanouts.push(nats_fanout(&on.nats, &on.client, Source::Log, clients, load.clone()).await);
        fanouts.push(sse_fanout(&on, clients, load).await);
        // Let the closed streams go before the next case.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // 1b. Per-session fan-out: each client its own session, the same total rate.
    for &clients in session_sizes.iter().filter(|_| part("sessions")) {
        let load = Load::per_session(rate, fan_secs, clients);
        eprintln!(
            "per-session fan-out: {clients} clients, {rate} events/s over {clients} sessions for {} s",
            load.secs()
        );
        fanouts.push(nats_fanout(&on.nats, &on.client, Source::Raw, clients, load.clone()).await);
        fanouts.push(nats_fanout(&on.nats, &on.client, Source::Log, 1, load.clone()).await);
        fanouts.push(sse_fanout(&on, clients, load).await);
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // 2. REST against a seeded registry, auth on and off in alternating rounds (on, off, on,
    // off): what one mesh left behind (the fan-out's load, a vacuum) weighs on both alike. Each
    // case keeps its best round.
    let off = BenchMesh::start(false).await;
    let mut rests: Vec<(bool, Rest)> = Vec::new();
    for round in (1..=REST_ROUNDS).filter(|_| part("rest")) {
        for (auth, mesh) in [(true, &on), (false, &off)] {
            eprintln!(
                "REST round {round}/{REST_ROUNDS}, NATS auth {}",
                if auth { "on" } else { "off" }
            );
            for r in mesh.rest(secs).await {
                match rests
                    .iter_mut()
                    .find(|(a, b)| *a == auth && b.case == r.case && b.concurrency == r.concurrency)
                {
                    Some((_, best)) if best.rps() >= r.rps() => {}
                    Some((_, best)) => *best = r,
                    None => rests.push((auth, r)),
                }
            }
        }
    }
    drop(on);
    drop(off);

    println!(
        "\n{:<26} {:>7} {:>7} {:>11} {:>11} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7}",
        "fan-out",
        "clients",
        "ev/s",
        "expected",
        "delivered",
        "p50 ms",
        "p99 ms",
        "max ms",
        "KiB/conn",
        "catch-ups",
        "gap fills",
        "foreign"
    );
    for f in &fanouts {
        let count = |c: Option<f64>| c.map_or_else(|| "-".into(), |c| c.to_string());
        println!(
            "{:<26} {:>7} {:>7} {:>11} {:>11} {:>9.2} {:>9.2} {:>9.2} {:>10} {:>9} {:>9} {:>7}",
            f.case,
            f.clients,
            f.rate,
            f.expected,
            f.delivered,
            f.lag_p50_us as f64 / 1000.0,
            f.lag_p99_us as f64 / 1000.0,
            f.lag_max_us as f64 / 1000.0,
            f.kib_per_conn.map_or_else(|| "-".into(), |k| format!("{k:.1}")),
            count(f.catch_ups),
            count(f.gap_fills),
            f.foreign,
        );
    }
    println!(
        "\n{:<34} {:>5} {:>5} {:>10} {:>10} {:>10} {:>7}",
        "REST", "auth", "conc", "req/s", "p50 µs", "p99 µs", "errors"
    );
    for (auth, r) in &rests {
        println!(
            "{:<34} {:>5} {:>5} {:>10.0} {:>10} {:>10} {:>7}",
            r.case,
            if *auth { "on" } else { "off" },
            r.concurrency,
            r.rps(),
            r.p50_us,
            r.p99_us,
            r.errors
        );
    }
    let rows: Vec<_> = rests
        .iter()
        .map(|(auth, c)| (*auth, c.case, c.concurrency, c.rps()))
        .collect();
    let cost = relay_testkit::auth_cost(&rows);

    let doc = json!({
        "benchmark": "gateway",
        "command": "make bench",
        "measuredAt": relay_bus::now_ms(),
        "machine": { "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get), "os": std::env::consts::OS },
        "setup": "private nats-server and a fresh Postgres database on loopback; release-built session-registry, event-ingest and gateway, each its own process; the bench process runs every client (SSE readers, NATS subscribers, HTTP callers) on the same two cores; fan-out with NATS auth on (the default), REST with auth on and, on a second mesh, off, in alternating rounds (on, off, on, off; each case's best round)",
        "fanout": fanouts.iter().map(Fanout::json).collect::<Vec<_>>(),
        "rest": rests.iter().map(|(auth, r)| json!({
            "case": r.case, "auth": auth, "concurrency": r.concurrency, "requests": r.requests, "errors": r.errors,
            "seconds": r.seconds, "throughputPerSec": r.rps().round(),
            "p50Us": r.p50_us, "p99Us": r.p99_us,
        })).collect::<Vec<_>>(),
        "authCost": cost,
    });
    relay_testkit::write_bench_results("gateway", &doc);
}
