//! The mesh under fire (`make chaos`). While a steady load runs through the client (messages to
//! two agents, events with and without token usage, permission requests), a watcher follows
//! the gateway's SSE stream, a webhook receiver gets every `permission.requested` and a schedule
//! sends a message every second, every service and the gateway are killed with SIGKILL in turn and
//! restarted, then NATS is killed and restarted, then Postgres is
//! shut down immediately (no checkpoint) and restarted. Every call is retried until the mesh
//! acknowledges it, as a client would; at the end we count what was acknowledged but is missing
//! (lost) and what arrived twice (duplicated). Both must be 0.
//!
//! Ignored by `make test`: it runs for about two minutes and wants the machine to itself. It
//! starts its own nats-server and its own Postgres server, so it never restarts the machine's.

use relay_client::contracts::automation::{
    CreateScheduleRequest, CreateWebhookRequest, ScheduleAction, ScheduleRef, ScheduleRunsRequest,
};
use relay_client::contracts::session::{AttachRequest, CreateRequest, MessagesRequest};
use relay_client::contracts::{
    ErrorCode,
    capabilities::DeliveryMode,
    cost::ReportRequest,
    delivery::DeliveryRef,
    events::{AppendRequest, NewEvent, SinceRequest},
    permission::{GetPermissionRequest, PermissionRequest},
    session::{DeliveryRequest, SendMessageRequest, SessionRef},
};
use relay_client::{Client, Error};
use relay_testkit::{
    Database, Nats, Postgres, PrimaryProxy, ServiceProcess, WebhookReceiver, bin_path, wait_for_instances,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

use relay_testkit::BUS_SERVICES as SERVICES;
/// Killed in this order. The agent harness is not: the agent lives under its PTY and dies with it.
const KILLED: [&str; 8] = [
    "session-registry",
    "event-ingest",
    "delivery-runner",
    "permission-manager",
    "coordination",
    "cost-aggregator",
    "automation",
    "gateway",
];
/// The webhook's signing secret (the receiver verifies with it).
const WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// The session the schedule sends to (an agent without a harness: its messages are kept).
const SCHEDULED_SESSION: &str = "chaos-scheduled";
const SCHEDULE: &str = "chaos-every-second";
/// Sessions with an agent each (fake agent under agent-harness) that the messages go to.
const AGENT_SESSIONS: usize = 2;
const EVENT_WORKERS: usize = 2;
/// Every how many events one is `tokens.used`, worth TOKENS_EACH tokens.
const USAGE_EVERY: u64 = 4;
const TOKENS_EACH: i64 = 15;
/// How long the load runs undisturbed before the first fault and after each recovery.
const STEADY: Duration = Duration::from_secs(4);
/// How long NATS and Postgres stay down.
const OUTAGE: Duration = Duration::from_secs(3);
/// Messages sent at once to each agent just before the delivery runner is killed, so that it
/// dies with deliveries in flight (surfaced by the harness, receipt not yet written).
const BURST: usize = 150;
/// How long each kind of count waits for what was acknowledged to arrive. A terminal agent
/// types one message per screen it has read (so that a menu the last one opened is seen before
/// the next keys go): the bursts take the PTY harness about a minute to type after the load.
const DRAIN: Duration = Duration::from_secs(120);

/// What one kind of load got acknowledged, and when.
#[derive(Default)]
struct Tally {
    /// (id, acknowledged at, seconds since the start)
    acked: Vec<(String, f64)>,
    /// Failed attempts by wire code, each retried; with when they happened.
    failed: Vec<(&'static str, f64)>,
    /// Delivery ids returned for acknowledged messages.
    deliveries: Vec<String>,
    /// Messages: (acknowledged at, seconds from the first attempt), for the soak's p99.
    latency: Vec<(f64, f64)>,
}

type Shared = Arc<Mutex<Tally>>;

/// Clones share the tallies.
#[derive(Clone)]
struct Load {
    messages: Vec<Shared>,
    events: Shared,
    permissions: Shared,
    /// Frame ids the SSE watcher was given, in order, and how often it had to reconnect.
    sse: Arc<Mutex<Vec<i64>>>,
    sse_reconnects: Arc<Mutex<usize>>,
}

fn since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Calls `f` until it succeeds, recording each failure; a client's retry loop.
async fn until_acked<T, F: std::future::Future<Output = Result<T, Error>>>(
    tally: &Shared,
    start: Instant,
    mut f: impl FnMut() -> F,
) -> T {
    loop {
        match f().await {
            Ok(v) => return v,
            Err(e) => {
                let code = e.code().map_or("client", ErrorCode::as_str);
                tally.lock().unwrap().failed.push((code, since(start)));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// One message with a client id, immediate mode, retried until acknowledged and recorded.
async fn send_one(client: &Client, session: &str, id: String, tally: &Shared, start: Instant) {
    let req = SendMessageRequest {
        message_id: Some(id.clone()),
        delivery: Some(DeliveryRequest {
            mode: DeliveryMode::Immediate,
        }),
        ..SendMessageRequest::text(session, &id)
    };
    let began = Instant::now();
    let sent = until_acked(tally, start, || client.session_send_message(&req)).await;
    let mut t = tally.lock().unwrap();
    t.acked.push((id, since(start)));
    t.latency.push((since(start), began.elapsed().as_secs_f64()));
    t.deliveries.extend(sent.delivery_ids.unwrap_or_default());
}

async fn send_messages(client: Client, session: String, tally: Shared, start: Instant, stop: watch::Receiver<bool>) {
    for i in 0.. {
        if *stop.borrow() {
            return;
        }
        send_one(&client, &session, format!("{session}-m{i}"), &tally, start).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `n` messages to `session` at once (16 in flight).
async fn burst(client: Client, session: String, n: usize, tally: Shared, start: Instant) {
    use futures::StreamExt;
    futures::stream::iter(0..n)
        .for_each_concurrent(16, |i| {
            send_one(&client, &session, format!("{session}-b{i}"), &tally, start)
        })
        .await;
}

async fn append_events(client: Client, worker: usize, tally: Shared, start: Instant, stop: watch::Receiver<bool>) {
    for i in 0u64.. {
        if *stop.borrow() {
            return;
        }
        let id = format!("chaos-e{worker}-{i}");
        let event = if i % USAGE_EVERY == 0 {
            NewEvent {
                event_id: Some(id.clone()),
                event_type: "tokens.used".into(),
                ts: None,
                session_id: Some("chaos-costs".into()),
                agent_name: None,
                agent_id: Some("chaos-agent".into()),
                workspace: None,
                payload: json!({"inputTokens": 10, "outputTokens": TOKENS_EACH - 10, "model": "chaos-model"}),
            }
        } else {
            NewEvent {
                event_id: Some(id.clone()),
                event_type: "chaos.tick".into(),
                ts: None,
                session_id: Some("chaos-events".into()),
                agent_name: None,
                agent_id: None,
                workspace: None,
                payload: json!({"worker": worker, "i": i}),
            }
        };
        let req = AppendRequest::One(event);
        until_acked(&tally, start, || client.event_append(&req)).await;
        tally.lock().unwrap().acked.push((id, since(start)));
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

async fn request_permissions(client: Client, tally: Shared, start: Instant, stop: watch::Receiver<bool>) {
    for i in 0.. {
        if *stop.borrow() {
            return;
        }
        let id = format!("chaos-p{i}");
        // A destructive command: the default policy leaves it pending for a human.
        let req = PermissionRequest {
            request_id: Some(id.clone()),
            agent_id: "chaos-agent".into(),
            session_id: "chaos-permissions".into(),
            tool: "Bash".into(),
            command: Some(format!("rm -rf /tmp/chaos-{i}")),
            file_path: None,
            description: "chaos load".into(),
        };
        until_acked(&tally, start, || client.permission_request(&req)).await;
        tally.lock().unwrap().acked.push((id, since(start)));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The mesh on its own NATS and its own Postgres server. Fields drop in order: the processes
/// first, then the database, then the servers.
struct Mesh {
    services: BTreeMap<&'static str, ServiceProcess>,
    /// Second replicas (on a NATS cluster).
    replicas: Vec<ServiceProcess>,
    harnesses: Vec<ServiceProcess>,
    client: Client,
    db: Database,
    /// The address that follows the primary, when the database is replicated.
    proxy: Option<PrimaryProxy>,
    pg: Postgres,
    standby: Option<Postgres>,
    /// One server, or the nodes of a cluster (every process is given all of them).
    nats: Vec<Nats>,
    health_port: u16,
    gateway_port: u16,
    surfaced: Vec<PathBuf>,
}

/// Settings every replica of `name` runs with (a replica posting webhooks without them would
/// refuse the loopback receiver and back off for minutes).
fn every_replica_env(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        // The receiver is on loopback; retries soon, so the drain is short. A schedule's call
        // whose reply was lost with a node holds its row until this timeout, then is retried.
        "automation" => &[
            ("RELAY_WEBHOOKS__ALLOW_PRIVATE", "true"),
            ("RELAY_WEBHOOKS__RETRY_BASE_MS", "200"),
            ("RELAY_WEBHOOKS__RETRY_MAX_MS", "1000"),
            ("RELAY_SCHEDULES__CALL_TIMEOUT_MS", "5000"),
        ],
        _ => &[],
    }
}

/// The database of a chaos run: one server, or a primary with a streaming standby behind one
/// address that follows the primary (HAProxy), replicating synchronously or not.
#[derive(Clone, Copy)]
enum Db {
    Single,
    Replicated { synchronous: bool },
}

impl Mesh {
    /// On one nats-server (`nodes` 1) or a cluster of `nodes`, with `replicas` of each service.
    async fn start(nodes: usize, replicas: usize, database: Db) -> Mesh {
        let nats = match nodes {
            1 => vec![Nats::start().await],
            n => Nats::start_cluster(n).await,
        };
        // The test's own client stays on the first node, which is never killed.
        let admin = nats[0].client().await;
        let pg = Postgres::start().await;
        let (standby, proxy) = match database {
            Db::Single => (None, None),
            Db::Replicated { synchronous } => {
                let standby = Postgres::standby_of(&pg).await;
                pg.set_synchronous(synchronous).await;
                let proxy = PrimaryProxy::start(&[&pg, &standby]).await;
                (Some(standby), Some(proxy))
            }
        };
        let db = Database::create_on(proxy.as_ref().map_or(&pg.admin_url, |p| &p.admin_url)).await;
        let free_port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .unwrap()
                .port()
        };
        let mut mesh = Mesh {
            client: Client::new(admin).with_timeout(Duration::from_secs(2)),
            nats,
            replicas: Vec::new(),
            pg,
            standby,
            proxy,
            db,
            services: BTreeMap::new(),
            health_port: free_port(),
            gateway_port: free_port(),
            harnesses: Vec::new(),
            surfaced: Vec::new(),
        };
        for name in KILLED {
            mesh.spawn(name).await;
        }
        for _ in 1..replicas {
            for name in KILLED.iter().filter(|n| **n != "gateway") {
                let urls = Nats::cluster_urls(&mesh.nats, mesh.replicas.len() + 1);
                let env: Vec<(&str, &str)> = every_replica_env(name)
                    .iter()
                    .copied()
                    .chain([("RELAY_NATS__URL", urls.as_str())])
                    .collect();
                mesh.replicas
                    .push(ServiceProcess::spawn(&bin_path(name), &mesh.nats[0], &mesh.db, &env));
                wait_for_instances(
                    mesh.client.nats(),
                    name,
                    mesh.replicas.len().div_ceil(KILLED.len() - 1) + 1,
                )
                .await;
            }
        }
        for k in 0..AGENT_SESSIONS {
            let session = format!("chaos-s{k}");
            let log = std::env::temp_dir().join(format!("chaos-agent-{k}-{}.log", uuid::Uuid::new_v4().simple()));
            let harness = ServiceProcess::spawn_with_args(
                &bin_path("agent-harness"),
                &[
                    "--session",
                    &session,
                    "--cli",
                    "claude",
                    "--",
                    &bin_path("fake-agent"),
                    "--style",
                    "claude",
                    "--log",
                    log.to_str().unwrap(),
                ],
                &mesh.nats[0],
                &mesh.db,
                &[("RELAY_NATS__URL", &Nats::cluster_urls(&mesh.nats, k + 1))],
            );
            mesh.harnesses.push(harness);
            mesh.surfaced.push(log);
            let c = &mesh.client;
            relay_testkit::wait_for(|| async {
                let s = c
                    .session_get(&SessionRef {
                        session_id: session.clone(),
                    })
                    .await
                    .ok()?;
                let agents = serde_json::to_value(s.session?).ok()?["agents"].clone();
                agents[0]["agentId"].is_string().then_some(())
            })
            .await;
        }
        mesh
    }

    /// Starts `name` and waits until it answers; event-ingest also serves /healthz (for the NATS
    /// outage), and the gateway listens on the same port each time (the SSE watcher reconnects).
    async fn spawn(&mut self, name: &'static str) {
        let health = format!("127.0.0.1:{}", self.health_port);
        let gateway = format!("127.0.0.1:{}", self.gateway_port);
        let env: &[(&str, &str)] = match name {
            "event-ingest" => &[("RELAY_TELEMETRY__HEALTH_LISTEN", &health)],
            "gateway" => &[
                ("RELAY_GATEWAY__LISTEN", &gateway),
                ("RELAY_API_TOKEN", ""),
                ("RELAY_GATEWAY__OPEN", "true"),
            ],
            _ => &[],
        };
        let urls = Nats::cluster_urls(&self.nats, self.services.len());
        let env: Vec<(&str, &str)> = env
            .iter()
            .chain(every_replica_env(name))
            .copied()
            .chain([("RELAY_NATS__URL", urls.as_str())])
            .collect();
        let p = ServiceProcess::spawn(&bin_path(name), &self.nats[0], &self.db, &env);
        self.services.insert(name, p);
        if name == "gateway" {
            let port = self.gateway_port;
            relay_testkit::wait_for(|| async { (http_status(port, "/readyz").await == Some(200)).then_some(()) }).await;
        } else {
            wait_for_instances(self.client.nats(), name, 1).await;
        }
    }

    /// The status code of GET /healthz on event-ingest, or None when nothing listens.
    async fn health(&self) -> Option<u16> {
        http_status(self.health_port, "/healthz").await
    }

    async fn wait_health(&self, want: u16) -> f64 {
        let t = Instant::now();
        relay_testkit::wait_for(|| async { (self.health().await == Some(want)).then_some(()) }).await;
        t.elapsed().as_secs_f64()
    }
}

/// The status code of a GET on loopback, or None when nothing answers.
async fn http_status(port: u16, path: &str) -> Option<u16> {
    let answer = relay_testkit::http_get(port, path).await?;
    answer.split(' ').nth(1)?.parse().ok()
}

/// Follows the gateway's SSE stream from offset 0 as a browser's EventSource does: after any
/// disconnect it reconnects with `Last-Event-ID`. Every frame id it is given goes into `seen`.
async fn watch_sse(port: u16, seen: Arc<Mutex<Vec<i64>>>, reconnects: Arc<Mutex<usize>>) {
    use futures::StreamExt;
    let http = reqwest::Client::new();
    let mut last: Option<i64> = None;
    loop {
        let url = format!("http://127.0.0.1:{port}/api/v1/events/sse");
        let req = match last {
            None => http.get(format!("{url}?offset=0")),
            Some(id) => http.get(url).header("Last-Event-ID", id.to_string()),
        };
        if let Ok(resp) = req.send().await
            && resp.status().is_success()
        {
            let mut body = resp.bytes_stream();
            let mut buf = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buf.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buf.find("\n\n") {
                    let frame: String = buf.drain(..end + 2).collect();
                    let id = frame.lines().find_map(|l| l.strip_prefix("id: ")?.parse().ok());
                    if let Some(id) = id {
                        seen.lock().unwrap().push(id);
                        last = Some(id);
                    }
                }
            }
        }
        *reconnects.lock().unwrap() += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// One fault: what was done, when, and how long until the mesh answered again.
struct Phase {
    name: String,
    from: f64,
    to: f64,
    /// From the fault until what was killed answered again (for NATS and Postgres: every service).
    recovered_s: f64,
}

/// The load running against a mesh: messages to each agent, events, permission requests and
/// the SSE watcher, until [`Running::finish`].
struct Running {
    load: Load,
    start: Instant,
    stop: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    sse: tokio::task::JoinHandle<()>,
}

impl Running {
    fn start(mesh: &Mesh) -> Running {
        let start = Instant::now();
        let (stop_tx, stop) = watch::channel(false);
        let load = Load {
            messages: (0..AGENT_SESSIONS).map(|_| Shared::default()).collect(),
            events: Shared::default(),
            permissions: Shared::default(),
            sse: Arc::default(),
            sse_reconnects: Arc::default(),
        };
        let mut tasks = Vec::new();
        for (k, tally) in load.messages.iter().enumerate() {
            let (c, t, s) = (mesh.client.clone(), tally.clone(), stop.clone());
            tasks.push(tokio::spawn(send_messages(c, format!("chaos-s{k}"), t, start, s)));
        }
        for w in 0..EVENT_WORKERS {
            let (c, t, s) = (mesh.client.clone(), load.events.clone(), stop.clone());
            tasks.push(tokio::spawn(append_events(c, w, t, start, s)));
        }
        let (c, t, s) = (mesh.client.clone(), load.permissions.clone(), stop.clone());
        tasks.push(tokio::spawn(request_permissions(c, t, start, s)));
        let sse = tokio::spawn(watch_sse(
            mesh.gateway_port,
            load.sse.clone(),
            load.sse_reconnects.clone(),
        ));
        Running {
            load,
            start,
            stop: stop_tx,
            tasks,
            sse,
        }
    }

    /// Stops the load (each loop finishes the call it is retrying first), then counts what was
    /// acknowledged against what arrived: the seconds the load ran, and the counts.
    async fn finish(self, mesh: &Mesh, receiver: &WebhookReceiver) -> (f64, Vec<Count>) {
        self.stop.send(true).unwrap();
        for t in self.tasks {
            t.await.unwrap();
        }
        let load_s = since(self.start);
        eprintln!("[{load_s:6.1}s] load stopped; draining");
        let counts = count(mesh, &self.load, receiver).await;
        self.sse.abort();
        (load_s, counts)
    }
}

/// Every kind of load got something acknowledged, lost nothing and surfaced nothing twice; an
/// attempt that failed while `what` answered `unavailable` or `timeout`, never a crash or
/// `internal`.
fn nothing_lost_or_twice(counts: &[Count], load: &Load, what: &str) {
    for c in counts {
        assert!(c.acked > 0, "{}: nothing was acknowledged", c.kind);
        assert_eq!(c.lost, 0, "{}: acknowledged but lost", c.kind);
        assert_eq!(c.duplicated, 0, "{}: duplicated", c.kind);
    }
    let codes = failed_by_code(load);
    for code in codes.as_object().unwrap().keys() {
        assert!(
            ["unavailable", "timeout"].contains(&code.as_str()),
            "a failure while {what} answered {code}: {codes}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "chaos run: `make chaos`"]
async fn under_kill9_and_nats_and_postgres_restarts_nothing_acknowledged_is_lost_or_surfaced_twice() {
    let mut mesh = Mesh::start(1, 1, Db::Single).await;
    let receiver = automate(&mesh.client).await;
    let running = Running::start(&mesh);
    let (start, load) = (running.start, running.load.clone());

    let mut phases = Vec::new();
    tokio::time::sleep(STEADY).await;
    phases.push(Phase {
        name: "steady load".into(),
        from: 0.0,
        to: since(start),
        recovered_s: 0.0,
    });

    let everyone_answers = |mesh: &Mesh| {
        let nats = mesh.client.nats().clone();
        async move {
            for name in SERVICES.iter().chain(&["automation"]) {
                wait_for_instances(&nats, name, 1).await;
            }
        }
    };

    let mut takeover_s = None;
    for name in KILLED {
        let from = since(start);
        let mut bursts = Vec::new();
        if name == "delivery-runner" {
            // Kill it mid-walk: once a third of a burst to each agent has been typed.
            let before: Vec<usize> = mesh.surfaced.iter().map(|p| lines(p).len()).collect();
            for (k, tally) in load.messages.iter().enumerate() {
                let (c, t) = (mesh.client.clone(), tally.clone());
                bursts.push(tokio::spawn(burst(c, format!("chaos-s{k}"), BURST, t, start)));
            }
            relay_testkit::wait_for(|| async {
                let now: Vec<usize> = mesh.surfaced.iter().map(|p| lines(p).len()).collect();
                now.iter().zip(&before).all(|(n, b)| n - b >= BURST / 3).then_some(())
            })
            .await;
        }
        eprintln!("[{:6.1}s] kill -9 {name}", since(start));
        // Which runner hands each agent its messages (`context.metadata.runner`), seen on the wire.
        let handed = (name == "delivery-runner").then(|| watch_runners(mesh.client.nats().clone()));
        if let Some(h) = &handed {
            relay_testkit::wait_for(|| async { (h.lock().unwrap().len() >= mesh.surfaced.len()).then_some(()) }).await;
        }
        let dead: Vec<(String, String)> = handed.as_ref().map_or_else(Vec::new, |h| {
            h.lock()
                .unwrap()
                .iter()
                .map(|(a, (r, _))| (a.clone(), r.clone()))
                .collect()
        });
        let t = Instant::now();
        mesh.services.get_mut(name).unwrap().kill9().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        mesh.spawn(name).await;
        let recovered_s = t.elapsed().as_secs_f64();
        eprintln!("[{:6.1}s] {name} restarted and answering", since(start));
        if let Some(h) = &handed {
            // Takeover: from the kill until another runner handed each of the dead runner's
            // agents a message (its leases freed by liveness, not left to expire).
            let took = relay_testkit::wait_for_within(DRAIN, || async {
                let now = h.lock().unwrap();
                let at: Option<Vec<Instant>> = dead
                    .iter()
                    .map(|(agent, old)| now.get(agent).filter(|(r, _)| r != old).map(|(_, at)| *at))
                    .collect();
                at.map(|at| at.into_iter().max().unwrap_or(t).duration_since(t))
            })
            .await;
            takeover_s = Some(took.as_secs_f64());
            eprintln!(
                "[{:6.1}s] the dead runner's agents taken over {:.2}s after the kill",
                since(start),
                took.as_secs_f64()
            );
        }
        for b in bursts {
            b.await.unwrap();
        }
        tokio::time::sleep(STEADY).await;
        phases.push(Phase {
            name: format!("kill -9 {name}"),
            from,
            to: since(start),
            recovered_s,
        });
    }

    // NATS: /healthz must say so while it is gone, and every service must come back by itself.
    let from = since(start);
    assert_eq!(mesh.health().await, Some(200), "healthy before the NATS outage");
    eprintln!("[{from:6.1}s] NATS killed");
    let t = Instant::now();
    mesh.nats[0].stop().await;
    let unhealthy_after = mesh.wait_health(503).await;
    tokio::time::sleep(OUTAGE).await;
    mesh.nats[0].start_again().await;
    let healthy_after = mesh.wait_health(200).await;
    everyone_answers(&mesh).await;
    let recovered_s = t.elapsed().as_secs_f64();
    eprintln!(
        "[{:6.1}s] NATS back; /healthz 503 after {unhealthy_after:.2}s, 200 again {healthy_after:.2}s after restart",
        since(start)
    );
    tokio::time::sleep(STEADY).await;
    phases.push(Phase {
        name: "NATS killed and restarted".into(),
        from,
        to: since(start),
        recovered_s,
    });

    let from = since(start);
    eprintln!("[{from:6.1}s] Postgres immediate shutdown");
    let t = Instant::now();
    mesh.pg.stop().await;
    tokio::time::sleep(OUTAGE).await;
    mesh.pg.start_again().await;
    everyone_answers(&mesh).await;
    let recovered_s = t.elapsed().as_secs_f64();
    eprintln!("[{:6.1}s] Postgres back", since(start));
    tokio::time::sleep(STEADY).await;
    phases.push(Phase {
        name: "Postgres crashed and restarted".into(),
        from,
        to: since(start),
        recovered_s,
    });

    let (load_s, counts) = running.finish(&mesh, &receiver).await;
    // Deliveries the runner sent again after a kill or an outage, which the harness recognised
    // by id and acknowledged without typing them twice.
    let absorbed: usize = mesh
        .harnesses
        .iter()
        .map(|h| {
            let log = std::fs::read_to_string(&h.log).unwrap_or_default();
            log.lines().filter(|l| l.contains("delivery seen before")).count()
        })
        .sum();
    println!("redeliveries the harnesses recognised and did not type again: {absorbed}");
    let doc = report(
        &phases,
        &load,
        &counts,
        load_s,
        json!({
            "what": "chaos run: kill -9 of each service, NATS and Postgres restarts under steady load",
            "command": "make chaos",
            "build": "debug",
            "health": {"503_after_nats_down_s": unhealthy_after, "200_after_nats_back_s": healthy_after},
            "redeliveries_absorbed_by_harness": absorbed,
            "runner_takeover_s": takeover_s,
        }),
    );
    relay_testkit::write_bench_results("chaos", &doc);

    nothing_lost_or_twice(&counts, &load, "a dependency was down");
}

/// A NATS cluster under fire (`make chaos-cluster`): the mesh on three NATS nodes, two
/// replicas of every service but the gateway, each process given every node (it connects to one
/// and moves on when that one goes). Under the same load as `make chaos`, node 2 is killed with
/// SIGKILL and started again, then node 3. Nothing acknowledged may be lost or surfaced twice.
#[tokio::test]
#[ignore = "runs for about a minute and wants the machine to itself: make chaos-cluster"]
async fn under_a_nats_cluster_node_killed_and_restarted_nothing_acknowledged_is_lost_or_surfaced_twice() {
    let mut mesh = Mesh::start(3, 2, Db::Single).await;
    let receiver = automate(&mesh.client).await;
    let running = Running::start(&mesh);
    let (start, load) = (running.start, running.load.clone());

    let mut phases = Vec::new();
    tokio::time::sleep(STEADY).await;
    phases.push(Phase {
        name: "steady load".into(),
        from: 0.0,
        to: since(start),
        recovered_s: 0.0,
    });
    // Every replica answers again (each reconnected to a node that is up).
    let everyone_answers = |mesh: &Mesh| {
        let nats = mesh.client.nats().clone();
        async move {
            for name in KILLED.iter().filter(|n| **n != "gateway") {
                wait_for_instances(&nats, name, 2).await;
            }
        }
    };
    for node in [1, 2] {
        let from = since(start);
        eprintln!("[{from:6.1}s] kill -9 NATS node n{}", node + 1);
        let t = Instant::now();
        mesh.nats[node].stop().await;
        everyone_answers(&mesh).await;
        let recovered_s = t.elapsed().as_secs_f64();
        eprintln!("[{:6.1}s] every replica answers without n{}", since(start), node + 1);
        tokio::time::sleep(STEADY).await;
        mesh.nats[node].start_again().await;
        for n in &mesh.nats {
            n.wait_routes().await;
        }
        eprintln!("[{:6.1}s] n{} back with its routes", since(start), node + 1);
        tokio::time::sleep(STEADY).await;
        phases.push(Phase {
            name: format!("NATS node n{} killed and restarted", node + 1),
            from,
            to: since(start),
            recovered_s,
        });
    }

    let (load_s, counts) = running.finish(&mesh, &receiver).await;
    let doc = report(
        &phases,
        &load,
        &counts,
        load_s,
        json!({
            "what": "chaos run on a 3-node NATS cluster: two replicas of each service, nodes 2 and 3 killed (SIGKILL) and restarted in turn under steady load",
            "command": "make chaos-cluster",
            "build": "debug",
        }),
    );
    relay_testkit::write_bench_results("chaos-cluster", &doc);
    nothing_lost_or_twice(&counts, &load, "a node was down");
}

/// A Postgres failover under the same load (`make chaos-failover`), once with asynchronous
/// replication and once with synchronous commit: a primary with a streaming standby, every
/// service reaching them through one address that follows the primary (HAProxy). The primary is
/// shut down immediately (no checkpoint, as a crash) and the standby promoted; the services carry
/// on through the same address. Synchronous commit must lose nothing acknowledged; asynchronous
/// replication may lose what the standby had not yet received, and the run counts it. Neither
/// may surface anything twice.
#[tokio::test]
#[ignore = "runs for about two minutes and wants the machine to itself: make chaos-failover"]
async fn under_a_postgres_failover_with_synchronous_commit_nothing_acknowledged_is_lost() {
    let mut runs = Vec::new();
    for synchronous in [false, true] {
        runs.push(failover_run(synchronous).await);
    }
    let doc = json!({
        "what": "chaos run: the Postgres primary shut down immediately under steady load and its streaming standby promoted; services reach Postgres through HAProxy, which follows the primary; once with asynchronous replication, once with synchronous commit",
        "command": "make chaos-failover",
        "build": "debug",
        "runs": runs.iter().map(|(doc, _, _)| doc.clone()).collect::<Vec<_>>(),
    });
    relay_testkit::write_bench_results("chaos-failover", &doc);
    for (doc, counts, load) in &runs {
        let what = format!("the primary failed over ({} replication)", doc["replication"]);
        if doc["replication"] == "synchronous" {
            nothing_lost_or_twice(counts, load, &what);
        } else {
            for c in counts {
                assert_eq!(c.duplicated, 0, "{}: duplicated after {what}", c.kind);
            }
        }
    }
}

/// One failover under load: the results document, the counts and the load.
async fn failover_run(synchronous: bool) -> (Value, Vec<Count>, Load) {
    let mode = if synchronous { "synchronous" } else { "asynchronous" };
    let mut mesh = Mesh::start(1, 1, Db::Replicated { synchronous }).await;
    let receiver = automate(&mesh.client).await;
    let running = Running::start(&mesh);
    let (start, load) = (running.start, running.load.clone());
    tokio::time::sleep(STEADY).await;
    let mut phases = vec![Phase {
        name: "steady load".into(),
        from: 0.0,
        to: since(start),
        recovered_s: 0.0,
    }];

    let from = since(start);
    eprintln!("[{from:6.1}s] Postgres primary shut down immediately ({mode} replication)");
    mesh.pg.stop().await;
    mesh.standby.as_ref().unwrap().promote().await;
    mesh.proxy.as_ref().unwrap().wait_for_primary().await;
    let promoted = since(start);
    eprintln!("[{promoted:6.1}s] standby promoted; the proxy sends connections to it");
    // Recovered: the first event appended through the mesh on the new primary (an append
    // acknowledged just after the kill may have committed on the old one).
    let first_ack = relay_testkit::wait_for_within(Duration::from_secs(60), || async {
        let t = load.events.lock().unwrap();
        t.acked.iter().map(|(_, at)| *at).find(|at| *at > promoted)
    })
    .await;
    eprintln!("[{:6.1}s] writes acknowledged again", since(start));
    tokio::time::sleep(STEADY).await;
    phases.push(Phase {
        name: format!("primary killed, standby promoted ({mode})"),
        from,
        to: since(start),
        recovered_s: first_ack - from,
    });

    let (load_s, counts) = running.finish(&mesh, &receiver).await;
    let settings = if synchronous {
        "synchronous_standby_names = '*', synchronous_commit = on"
    } else {
        "synchronous_standby_names = '' (Postgres's default)"
    };
    let doc = report(
        &phases,
        &load,
        &counts,
        load_s,
        json!({"replication": mode, "settings": settings}),
    );
    (doc, counts, load)
}

/// `make soak` (outside CI): the chaos load, undisturbed, for `RELAY_SOAK_SECONDS` (default an
/// hour) with every retention window set to `RELAY_SOAK_WINDOW_SECONDS` (default 300): the
/// event log's, the outboxes', the finished deliveries', webhook posts', schedule runs',
/// resolved permissions', quiet sessions', relay messages' and the cost roll-up's. Every `RELAY_SOAK_SAMPLE_SECONDS`
/// (default 30) it records each table's size, live and dead tuples, each service's RSS and the
/// p99 of message sends, and prints how each changed between the end of the first two windows
/// and the end of the run: what stays flat and what still grows. Figures only, no asserts on
/// them; bench/results/soak.json.
#[allow(unsafe_code)] // std::env::set_var for the services it starts: see the SAFETY note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "runs for an hour by default: make soak"]
async fn soak_at_steady_load_table_sizes_memory_and_latency_over_time() {
    let env_secs =
        |name: &str, default: u64| -> u64 { std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default) };
    let (run_s, window_s, sample_s) = (
        env_secs("RELAY_SOAK_SECONDS", 3600),
        env_secs("RELAY_SOAK_WINDOW_SECONDS", 300),
        env_secs("RELAY_SOAK_SAMPLE_SECONDS", 30),
    );
    let window_ms = (window_s * 1000).to_string();
    // The services are this process's children and read these.
    for (k, v) in [
        ("RELAY_DATABASE__OUTBOX_KEEP_MS", window_ms.as_str()),
        ("RELAY_RUNNER__KEEP_FINISHED_MS", window_ms.as_str()),
        ("RELAY_INGEST__RETENTION_MS", window_ms.as_str()),
        ("RELAY_INGEST__RETENTION_INTERVAL_MS", "10000"),
        ("RELAY_WEBHOOKS__KEEP_DELIVERIES_MS", window_ms.as_str()),
        ("RELAY_SCHEDULES__KEEP_RUNS_MS", window_ms.as_str()),
        ("RELAY_PERMISSIONS__KEEP_RESOLVED_MS", window_ms.as_str()),
        ("RELAY_REGISTRY__RETENTION__ARCHIVE_CLOSED_AFTER_MS", window_ms.as_str()),
        ("RELAY_REGISTRY__RETENTION__PURGE_ARCHIVED_AFTER_MS", window_ms.as_str()),
        ("RELAY_REGISTRY__RETENTION__KEEP_MS", window_ms.as_str()),
        ("RELAY_COSTS__ROLLUP_AFTER_MS", window_ms.as_str()),
    ] {
        // SAFETY: set before any other thread of this test reads the environment.
        unsafe { std::env::set_var(k, v) };
    }
    let mesh = Mesh::start(1, 1, Db::Single).await;
    let _receiver = automate(&mesh.client).await;
    let running = Running::start(&mesh);
    let pool = mesh.db.pool().await;
    let mut samples: Vec<Value> = Vec::new();
    let mut seen_latencies = 0;
    eprintln!("soak: {run_s} s of steady load, windows of {window_s} s, a sample every {sample_s} s");
    loop {
        tokio::time::sleep(Duration::from_secs(sample_s)).await;
        let at = since(running.start);
        let tables: Vec<(String, i64, i64, i64)> = sqlx::query_as(
            "SELECT relname::text, pg_total_relation_size(relid), n_live_tup, n_dead_tup
             FROM pg_stat_user_tables WHERE relname <> '_sqlx_migrations' ORDER BY relname",
        )
        .fetch_all(&pool)
        .await
        .unwrap_or_default();
        let rss: BTreeMap<&str, u64> = mesh
            .services
            .iter()
            .map(|(n, p)| (*n, relay_testkit::rss_kib(p.pid())))
            .collect();
        let mut lat: Vec<u64> = load_latencies(&running.load, &mut seen_latencies);
        lat.sort_unstable();
        let p99_ms = relay_testkit::percentile(&lat, 0.99) as f64 / 1000.0;
        let total: i64 = tables.iter().map(|t| t.1).sum();
        let dead: i64 = tables.iter().map(|t| t.3).sum();
        eprintln!(
            "[{at:7.0}s] database {:>8} KiB, dead tuples {dead:>7}, services RSS {:>7} KiB, send p99 {p99_ms:7.1} ms ({} sends)",
            total / 1024,
            rss.values().sum::<u64>(),
            lat.len()
        );
        samples.push(json!({
            "at_s": at,
            "tables": tables.iter().map(|(n, size, live, dead)| json!({"table": n, "bytes": size, "live": live, "dead": dead})).collect::<Vec<_>>(),
            "rss_kib": rss,
            "send_p99_ms": p99_ms,
            "sends": lat.len(),
        }));
        if at >= run_s as f64 {
            break;
        }
    }
    running.stop.send(true).unwrap();
    for t in running.tasks {
        t.await.unwrap();
    }
    running.sse.abort();

    // Flat or growing: each table from the first sample past two windows to the last.
    let settled = samples
        .iter()
        .find(|s| s["at_s"].as_f64().unwrap() >= 2.0 * window_s as f64)
        .unwrap_or(&samples[0])
        .clone();
    let last = samples.last().unwrap().clone();
    let rows = |s: &Value| -> BTreeMap<String, (i64, i64, i64)> {
        s["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let n = |k: &str| t[k].as_i64().unwrap_or(0);
                (
                    t["table"].as_str().unwrap().to_string(),
                    (n("bytes"), n("live"), n("dead")),
                )
            })
            .collect()
    };
    let (from, to) = (rows(&settled), rows(&last));
    println!(
        "\n{:<28} {:>12} {:>12} {:>10} {:>10} {:>8} {:>8}",
        "table", "KiB settled", "KiB end", "rows set.", "rows end", "dead", "verdict"
    );
    let mut growth = Vec::new();
    for (t, (bytes, live, dead)) in &to {
        let (b0, l0, _) = from.get(t).copied().unwrap_or_default();
        // Growing: more rows at the end than once the windows had settled (by 10 % and 100).
        let grows = *live > l0 + (l0 / 10).max(100);
        let verdict = if grows { "grows" } else { "flat" };
        println!(
            "{t:<28} {:>12} {:>12} {l0:>10} {live:>10} {dead:>8} {verdict:>8}",
            b0 / 1024,
            bytes / 1024
        );
        growth.push(json!({"table": t, "bytesSettled": b0, "bytesEnd": bytes, "rowsSettled": l0, "rowsEnd": live, "deadEnd": dead, "verdict": verdict}));
    }
    relay_testkit::write_bench_results(
        "soak",
        &json!({
            "what": "soak: the chaos load (messages to two PTY agents, events with token usage, permission requests, a schedule, a webhook, an SSE watcher) undisturbed, every retention window short",
            "command": format!("RELAY_SOAK_SECONDS={run_s} RELAY_SOAK_WINDOW_SECONDS={window_s} make soak"),
            "build": "debug",
            "windowSeconds": window_s,
            "settledAtSeconds": settled["at_s"],
            "growth": growth,
            "samples": samples,
        }),
    );
}

/// The send latencies (µs) acknowledged since the last call.
fn load_latencies(load: &Load, seen: &mut usize) -> Vec<u64> {
    let mut all: Vec<(f64, f64)> = Vec::new();
    for m in &load.messages {
        all.extend(m.lock().unwrap().latency.iter().copied());
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let new: Vec<u64> = all[(*seen).min(all.len())..]
        .iter()
        .map(|(_, s)| (s * 1e6) as u64)
        .collect();
    *seen = all.len();
    new
}

struct Count {
    kind: &'static str,
    acked: usize,
    lost: usize,
    duplicated: usize,
}

/// A webhook for `permission.requested` to a receiver that checks signatures, and a schedule
/// sending a message every second to a session of its own.
async fn automate(c: &Client) -> WebhookReceiver {
    let receiver = WebhookReceiver::start(WEBHOOK_SECRET).await;
    let hook = CreateWebhookRequest {
        url: receiver.url.clone(),
        events: Some(vec!["permission.requested".into()]),
        secret: Some(WEBHOOK_SECRET.into()),
        description: Some("chaos".into()),
        a2a_task: None,
    };
    c.webhook_create(&hook).await.unwrap();
    let session = CreateRequest {
        session_id: Some(SCHEDULED_SESSION.into()),
        ..Default::default()
    };
    c.session_create(&session).await.unwrap();
    let attach: AttachRequest = serde_json::from_value(json!({
        "sessionId": SCHEDULED_SESSION, "agent": {"kind": "persona", "personaId": "p-1"}
    }))
    .unwrap();
    c.session_agent_attach(&attach).await.unwrap();
    let schedule = CreateScheduleRequest {
        schedule_id: Some(SCHEDULE.into()),
        name: None,
        cron: Some("* * * * * *".into()),
        time_zone: None,
        at: None,
        action: ScheduleAction::SendMessage {
            session_id: SCHEDULED_SESSION.into(),
            text: "tick".into(),
            mode: None,
            agent_ids: None,
            on_busy: None,
            priority: None,
            deadline: None,
        },
    };
    c.schedule_create(&schedule).await.unwrap();
    receiver
}

/// Waits (at most DRAIN for each kind) for everything acknowledged to arrive, then counts.
async fn count(mesh: &Mesh, load: &Load, receiver: &WebhookReceiver) -> Vec<Count> {
    let c = &mesh.client;
    let mut counts = Vec::new();

    // Messages, as the agents saw them: each acknowledged message typed exactly once.
    let (mut acked, mut lost, mut duplicated) = (0, 0, 0);
    let drain = Instant::now() + DRAIN;
    for (k, tally) in load.messages.iter().enumerate() {
        let ids: Vec<String> = tally.lock().unwrap().acked.iter().map(|(id, _)| id.clone()).collect();
        let seen = loop {
            let seen = lines(&mesh.surfaced[k]);
            if ids.iter().all(|id| seen.contains_key(id)) || Instant::now() > drain {
                break seen;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        acked += ids.len();
        lost += ids.iter().filter(|id| !seen.contains_key(*id)).count();
        duplicated += seen.values().map(|n| n - 1).sum::<usize>();
    }
    counts.push(Count {
        kind: "messages surfaced to agents",
        acked,
        lost,
        duplicated,
    });

    // Delivery records: each delivered, and announced delivered once in the event log. A
    // receipt lost with a NATS node is recorded on the runner's retry (the harness recognises
    // the delivery id), so this waits too.
    let ids: Vec<String> = load
        .messages
        .iter()
        .flat_map(|t| t.lock().unwrap().deliveries.clone())
        .collect();
    // First every delivery `delivered`; then, 5 s later, how many are not yet announced in the
    // event log (the outbox forwarder keeping up, a dead runner's rows drained at once).
    let drain = Instant::now() + DRAIN;
    loop {
        let mut pending = 0;
        for id in &ids {
            let d = c
                .delivery_get(&DeliveryRef {
                    delivery_id: id.clone(),
                })
                .await;
            if d.map(|d| serde_json::to_value(d).unwrap()["status"].clone()).ok() != Some(json!("delivered")) {
                pending += 1;
            }
        }
        if pending == 0 || Instant::now() > drain {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let logged: std::collections::HashSet<String> = all_events(c)
        .await
        .iter()
        .filter(|e| e["type"] == "delivery.delivered")
        .filter_map(|e| e["payload"]["deliveryId"].as_str().map(String::from))
        .collect();
    counts.push(Count {
        kind: "delivery events logged within 5 s",
        acked: ids.len(),
        lost: ids.iter().filter(|id| !logged.contains(*id)).count(),
        duplicated: 0,
    });

    let drain = Instant::now() + DRAIN;
    let (events, not_delivered) = loop {
        let events = all_events(c).await;
        let delivered: std::collections::HashSet<&str> = events
            .iter()
            .filter(|e| e["type"] == "delivery.delivered")
            .filter_map(|e| e["payload"]["deliveryId"].as_str())
            .collect();
        let mut not_delivered = 0;
        for id in &ids {
            let d = c
                .delivery_get(&DeliveryRef {
                    delivery_id: id.clone(),
                })
                .await;
            let status = d.map(|d| serde_json::to_value(d).unwrap()["status"].clone());
            if status.ok() != Some(json!("delivered")) || !delivered.contains(id.as_str()) {
                not_delivered += 1;
            }
        }
        if not_delivered == 0 || Instant::now() > drain {
            break (events, not_delivered);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let mut delivered_events: HashMap<&str, usize> = HashMap::new();
    for e in events.iter().filter(|e| e["type"] == "delivery.delivered") {
        if let Some(id) = e["payload"]["deliveryId"].as_str() {
            *delivered_events.entry(id).or_default() += 1;
        }
    }
    counts.push(Count {
        kind: "deliveries delivered",
        acked: ids.len(),
        lost: not_delivered,
        duplicated: ids
            .iter()
            .map(|id| delivered_events.get(id.as_str()).map_or(0, |n| n - 1))
            .sum(),
    });

    // Events: every acknowledged event id in the log once; the whole log dense (no seq gaps but
    // the skip to a new server timeline after a failover) with no event id twice, whichever
    // service's outbox it came from.
    let mut per_id: HashMap<&str, usize> = HashMap::new();
    for e in &events {
        *per_id.entry(e["eventId"].as_str().unwrap()).or_default() += 1;
    }
    let ids: Vec<String> = load
        .events
        .lock()
        .unwrap()
        .acked
        .iter()
        .map(|(id, _)| id.clone())
        .collect();
    let gaps = events
        .windows(2)
        .map(|w| (w[0]["seq"].as_i64().unwrap(), w[1]["seq"].as_i64().unwrap()))
        .filter(|(a, b)| *b != a + 1 && !(b > a && b & ((1 << 40) - 1) == 1))
        .count();
    counts.push(Count {
        kind: "events appended",
        acked: ids.len(),
        lost: ids.iter().filter(|id| !per_id.contains_key(id.as_str())).count(),
        duplicated: ids.iter().map(|id| per_id.get(id.as_str()).map_or(0, |n| n - 1)).sum(),
    });
    counts.push(Count {
        kind: "event log (gaps, repeated ids)",
        acked: events.len(),
        lost: gaps,
        duplicated: per_id.values().map(|n| n - 1).sum(),
    });

    // The SSE watcher, across gateway kills and reconnects: every seq of the log once.
    let head = events.last().map_or(0, |e| e["seq"].as_i64().unwrap());
    let drain = Instant::now() + DRAIN;
    while Instant::now() < drain && !load.sse.lock().unwrap().contains(&head) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seen = load.sse.lock().unwrap().clone();
    let unique: std::collections::HashSet<i64> = seen.iter().copied().collect();
    counts.push(Count {
        kind: "SSE frames (via Last-Event-ID)",
        acked: events.len(),
        lost: events
            .iter()
            .filter(|e| !unique.contains(&e["seq"].as_i64().unwrap()))
            .count(),
        duplicated: seen.len() - unique.len(),
    });

    // Token usage: the cost report adds up exactly the usage events acknowledged.
    let usage_acked = ids
        .iter()
        .filter(|id| id.rsplit('-').next().unwrap().parse::<u64>().unwrap() % USAGE_EVERY == 0)
        .count();
    let expected = usage_acked as i64 * TOKENS_EACH;
    let report_req = ReportRequest {
        since: None,
        until: None,
        agent: None,
        session: Some("chaos-costs".into()),
        model: None,
    };
    let mut total = 0;
    let drain = Instant::now() + DRAIN;
    while Instant::now() < drain {
        if let Ok(r) = c.cost_report(&report_req).await {
            total = r.total.total_tokens;
            if total >= expected {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    counts.push(Count {
        kind: "token usage events costed",
        acked: usage_acked,
        lost: ((expected - total).max(0) / TOKENS_EACH) as usize,
        duplicated: ((total - expected).max(0) / TOKENS_EACH) as usize,
    });

    // Permission requests: each stored, each announced once in the event log.
    let ids: Vec<String> = load
        .permissions
        .lock()
        .unwrap()
        .acked
        .iter()
        .map(|(id, _)| id.clone())
        .collect();
    let mut missing = 0;
    for id in &ids {
        let got = c.permission_get(&GetPermissionRequest { request_id: id.clone() }).await;
        if got.is_err() {
            missing += 1;
        }
    }
    let mut announced: HashMap<&str, usize> = HashMap::new();
    for e in events.iter().filter(|e| e["type"] == "permission.requested") {
        if let Some(id) = e["payload"]["requestId"].as_str() {
            *announced.entry(id).or_default() += 1;
        }
    }
    counts.push(Count {
        kind: "permission requests",
        acked: ids.len(),
        lost: missing,
        duplicated: ids
            .iter()
            .map(|id| announced.get(id.as_str()).map_or(0, |n| n - 1))
            .sum(),
    });
    counts.push(Count {
        kind: "permission.requested events",
        acked: ids.len(),
        lost: ids.iter().filter(|id| !announced.contains_key(id.as_str())).count(),
        duplicated: 0,
    });
    counts.push(count_webhooks(&events, receiver).await);
    counts.push(count_schedule(c).await);
    counts
}

/// Webhook posts: every `permission.requested` in the log answered 204 by the receiver under
/// one webhook-id with a valid signature. A post repeated under the same id (a replica killed
/// before it recorded the answer) is what receivers drop by that id: counted apart.
async fn count_webhooks(events: &[Value], receiver: &WebhookReceiver) -> Count {
    let seqs: Vec<i64> = events
        .iter()
        .filter(|e| e["type"] == "permission.requested")
        .map(|e| e["seq"].as_i64().unwrap())
        .collect();
    let drain = Instant::now() + DRAIN;
    let posts = loop {
        let posts = receiver.posts();
        let ok: std::collections::HashSet<i64> = posts
            .iter()
            .filter(|p| p["status"] == 204)
            .filter_map(|p| p["seq"].as_i64())
            .collect();
        if seqs.iter().all(|s| ok.contains(s)) || Instant::now() > drain {
            break posts;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let invalid = posts.iter().filter(|p| p["valid"] != true).count();
    assert_eq!(invalid, 0, "every post's signature verifies");
    let mut ids_per_seq: HashMap<i64, std::collections::HashSet<String>> = HashMap::new();
    let mut answered = 0;
    for p in posts.iter().filter(|p| p["status"] == 204) {
        answered += 1;
        let id = p["id"].as_str().unwrap().to_string();
        ids_per_seq.entry(p["seq"].as_i64().unwrap()).or_default().insert(id);
    }
    let distinct: usize = ids_per_seq.values().map(std::collections::HashSet::len).sum();
    println!(
        "webhook posts answered: {answered}, under {distinct} webhook-ids (repeats a receiver drops by id: {})",
        answered - distinct
    );
    Count {
        kind: "webhook posts (permission.requested)",
        acked: seqs.len(),
        lost: seqs.iter().filter(|s| !ids_per_seq.contains_key(s)).count(),
        duplicated: ids_per_seq.values().map(|ids| ids.len() - 1).sum(),
    }
}

/// Schedule runs: each recorded run sent its one message (a run failed is a message lost), and
/// the session holds no message of a run that was not recorded, nor one twice.
async fn count_schedule(c: &Client) -> Count {
    let pause = ScheduleRef {
        schedule_id: SCHEDULE.into(),
    };
    // Pausing waits for a run in flight (its row is locked until it is recorded or set to be
    // retried, at most the call timeout).
    let drain = Instant::now() + DRAIN;
    while c.schedule_pause(&pause).await.is_err() {
        assert!(Instant::now() < drain, "the schedule could not be paused in {DRAIN:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A run being retried when the schedule was paused is still finished and recorded.
    let (runs, sent, run_ids) = loop {
        let runs = c
            .schedule_runs(&ScheduleRunsRequest {
                schedule_id: SCHEDULE.into(),
                limit: Some(500),
            })
            .await
            .unwrap()
            .runs;
        let messages = c
            .session_messages(&MessagesRequest {
                session_id: SCHEDULED_SESSION.into(),
                include_ancestors: None,
                limit: Some(5000),
                cursor: None,
            })
            .await
            .unwrap()
            .messages;
        let sent: HashMap<String, usize> = messages.iter().fold(HashMap::new(), |mut m, msg| {
            *m.entry(msg.message_id.clone()).or_default() += 1;
            m
        });
        let run_ids: std::collections::HashSet<String> =
            runs.iter().map(|r| format!("{SCHEDULE}-{}", r.due_at)).collect();
        if sent.keys().all(|id| run_ids.contains(id)) || Instant::now() > drain {
            break (runs, sent, run_ids);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let failed = runs.iter().filter(|r| !r.ok).count();
    println!("schedule runs: {} ({failed} failed)", runs.len());
    Count {
        kind: "schedule runs (one message each)",
        acked: runs.len(),
        lost: failed + run_ids.iter().filter(|id| !sent.contains_key(*id)).count(),
        duplicated: sent.values().map(|n| n - 1).sum::<usize>()
            + sent.keys().filter(|id| !run_ids.contains(*id)).count(),
    }
}

/// The whole event log, from seq 0, as JSON.
async fn all_events(c: &Client) -> Vec<Value> {
    let mut out = Vec::new();
    let mut seq = 0;
    loop {
        let page = c
            .event_since(&SinceRequest {
                seq,
                limit: Some(1000),
                ..Default::default()
            })
            .await
            .expect("event.since after the run");
        if page.events.is_empty() {
            return out;
        }
        seq = page.next_seq;
        out.extend(page.events.into_iter().map(|e| serde_json::to_value(e).unwrap()));
    }
}

/// Lines of an agent's log, counted.
fn lines(path: &PathBuf) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for l in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *seen.entry(l.to_string()).or_default() += 1;
    }
    seen
}

fn failed_by_code(load: &Load) -> Value {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for t in load.messages.iter().chain([&load.events, &load.permissions]) {
        for (code, _) in &t.lock().unwrap().failed {
            *by.entry(code).or_default() += 1;
        }
    }
    json!(by)
}

/// Per phase and kind: acknowledged, failed attempts, and the longest wait between two acks.
fn phase_json(p: &Phase, load: &Load) -> Value {
    let kinds: Vec<(&str, Vec<&Shared>)> = vec![
        ("messages", load.messages.iter().collect()),
        ("events", vec![&load.events]),
        ("permissions", vec![&load.permissions]),
    ];
    let mut per_kind = serde_json::Map::new();
    for (kind, tallies) in kinds {
        let (mut acked, mut failed, mut stall) = (0, 0, 0.0f64);
        for t in tallies {
            let t = t.lock().unwrap();
            let times: Vec<f64> = t
                .acked
                .iter()
                .map(|(_, at)| *at)
                .filter(|at| (p.from..p.to).contains(at))
                .collect();
            acked += times.len();
            failed += t.failed.iter().filter(|(_, at)| (p.from..p.to).contains(at)).count();
            let mut prev = p.from;
            for at in times {
                stall = stall.max(at - prev);
                prev = at;
            }
        }
        per_kind.insert(
            kind.into(),
            json!({"acknowledged": acked, "failed_attempts": failed, "longest_stall_s": round(stall)}),
        );
    }
    json!({"phase": p.name, "seconds": round(p.to - p.from), "recovered_s": round(p.recovered_s), "load": per_kind})
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// What every chaos run reports: the table printed, and the results document's common fields
/// (the load, each phase, the counts, the failed attempts) with the run's own in `extra`.
fn report(phases: &[Phase], load: &Load, counts: &[Count], load_s: f64, extra: Value) -> Value {
    print_report(phases, load, counts);
    let mut doc = json!({
        "load_seconds": load_s,
        "phases": phases.iter().map(|p| phase_json(p, load)).collect::<Vec<_>>(),
        "totals": counts.iter().map(|c| json!({
            "kind": c.kind, "acknowledged": c.acked, "lost": c.lost, "duplicated": c.duplicated,
        })).collect::<Vec<_>>(),
        "failed_attempts_by_code": failed_by_code(load),
        "sse_reconnects": *load.sse_reconnects.lock().unwrap(),
    });
    if let (Some(doc), Value::Object(extra)) = (doc.as_object_mut(), extra) {
        doc.extend(extra);
    }
    doc
}

fn print_report(phases: &[Phase], load: &Load, counts: &[Count]) {
    println!(
        "\n{:<36} {:>6} {:>9} | {:>15} | {:>15} | {:>15}",
        "phase", "secs", "recovered", "messages", "events", "permissions"
    );
    println!(
        "{:<36} {:>6} {:>9} | {:>15} | {:>15} | {:>15}",
        "", "", "s", "ok/fail/stall", "ok/fail/stall", "ok/fail/stall"
    );
    for p in phases {
        let j = phase_json(p, load);
        let cell = |k: &str| {
            let l = &j["load"][k];
            format!(
                "{}/{}/{:.1}s",
                l["acknowledged"],
                l["failed_attempts"],
                l["longest_stall_s"].as_f64().unwrap()
            )
        };
        println!(
            "{:<36} {:>6.1} {:>9.2} | {:>15} | {:>15} | {:>15}",
            p.name,
            p.to - p.from,
            p.recovered_s,
            cell("messages"),
            cell("events"),
            cell("permissions")
        );
    }
    println!(
        "\n{:<38} {:>12} {:>6} {:>10}",
        "what", "acknowledged", "lost", "duplicated"
    );
    for c in counts {
        println!("{:<38} {:>12} {:>6} {:>10}", c.kind, c.acked, c.lost, c.duplicated);
    }
    println!("failed attempts (retried) by code: {}", failed_by_code(load));
    println!("SSE watcher reconnects: {}", load.sse_reconnects.lock().unwrap());
}

/// The runner that last handed each agent a message, and when: from `agent.<id>.deliver`
/// requests seen on the wire (`context.metadata.runner`).
fn watch_runners(nats: async_nats::Client) -> Arc<Mutex<HashMap<String, (String, Instant)>>> {
    use futures::StreamExt;
    let seen: Arc<Mutex<HashMap<String, (String, Instant)>>> = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let Ok(mut sub) = nats.subscribe("agent.*.deliver").await else {
            return;
        };
        while let Some(msg) = sub.next().await {
            let Ok(req) = serde_json::from_slice::<Value>(&msg.payload) else {
                continue;
            };
            if let Some(runner) = req["context"]["metadata"]["runner"].as_str() {
                let agent = msg.subject.split('.').nth(1).unwrap_or_default().to_string();
                seen.lock().unwrap().insert(agent, (runner.to_string(), Instant::now()));
            }
        }
    });
    out
}
