//! SSE streams (seed 003 §3): replay from the event log, then live, with the event seq as the
//! SSE id, so a client reconnecting with `Last-Event-ID` sees neither a gap nor a duplicate.
//!
//! One hub per gateway holds the only live NATS subscription (`event.committed.>`) and hands a
//! dense, in-order stream of events to every client through a broadcast channel. Each client
//! runs its own task: it replays with `event.since` up to the log's head, then follows the hub,
//! skipping what it already sent. A client that cannot keep up falls behind the hub's buffer and
//! catches up from the log on its own, so it never holds the others back.
//!
//! A stream of one session (the web-app case: thousands of clients, each on its own session)
//! does not follow the whole log: the hub also hands each event to its session's own channel,
//! so a client wakes only for its session's events, not for every event of every session.

use crate::extract::{Path, Query};
use crate::metrics::Metrics;
use crate::{ApiError, AppState, GatewaySettings};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use bytes::{Bytes, BytesMut};
use futures::StreamExt as _;
use relay_contracts::events::{Event, QueryRequest, SinceRequest, SinceResponse};
use relay_contracts::rpc;
use relay_contracts::subjects::event as subjects;
use serde::Deserialize;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// One event, serialised once for every client that gets it: as JSON and as the SSE frame.
pub struct Live {
    pub event: Event,
    pub json: String,
    /// `event: <type>`, `id: <seq>`, `data: <json>` and the blank line; the JSON is compact, so
    /// it is one data line.
    pub frame: Bytes,
}

impl Live {
    pub fn new(event: Event) -> Live {
        let json = serde_json::to_string(&event).unwrap_or_default();
        let frame = format!("event: {}\nid: {}\ndata: {json}\n\n", event.event_type, event.seq);
        Live {
            event,
            json,
            frame: Bytes::from(frame),
        }
    }
}

#[derive(Clone)]
pub struct Hub {
    tx: broadcast::Sender<Arc<Live>>,
    /// The seq of the last event handed to clients.
    head: Arc<AtomicI64>,
    /// One channel per session that has a stream open; dropped with its last stream.
    sessions: Arc<std::sync::Mutex<HashMap<String, broadcast::Sender<Arc<Live>>>>>,
}

/// Events a session's channel holds for a slow stream before it catches up from the log; kept
/// small because there is one per open session (a ring of this many slots, allocated at once).
const SESSION_CAPACITY: usize = 32;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

impl Hub {
    pub fn start(nats: async_nats::Client, settings: &GatewaySettings, metrics: Arc<Metrics>) -> Hub {
        let (tx, _) = broadcast::channel(settings.sse_hub_capacity.max(16));
        let hub = Hub {
            tx,
            head: Arc::new(AtomicI64::new(-1)),
            sessions: Arc::default(),
        };
        tokio::spawn(hub.clone().run(nats, settings.sse_replay_page, metrics));
        hub
    }

    async fn run(self, nats: async_nats::Client, page: i64, metrics: Arc<Metrics>) {
        use futures::StreamExt;
        let mut live = loop {
            match nats.subscribe(format!("{}>", subjects::committed_subject(""))).await {
                Ok(s) => break s,
                Err(e) => tracing::warn!(error = %e, "cannot subscribe to committed events, retrying"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        // Start at the log's head: clients replay anything older themselves.
        let mut cursor = loop {
            match log_head(&nats, REQUEST_TIMEOUT).await {
                Ok(head) => break head,
                Err(e) => tracing::warn!(error = %e, "event log not reachable yet, retrying"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        self.head.store(cursor, Ordering::Release);
        tracing::info!(head = cursor, "SSE hub following the event log");
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        let mut quiet = true;
        loop {
            tokio::select! {
                msg = live.next() => {
                    let Some(msg) = msg else { return };
                    quiet = false;
                    let Ok(event) = serde_json::from_slice::<Event>(&msg.payload) else { continue };
                    if event.seq <= cursor {
                        continue;
                    }
                    if event.seq > cursor + 1 {
                        // NATS lost or reordered something: read the missing seqs from the log.
                        metrics.hub_gap_fills.inc();
                        if let Err(e) = self.fill(&nats, &mut cursor, event.seq - 1, page).await {
                            tracing::warn!(error = %e, "cannot fill a gap from the event log; will retry");
                            continue;
                        }
                    }
                    self.emit(event, &mut cursor);
                }
                _ = tick.tick() => {
                    // Nothing arrived for a second: make sure nothing was missed (a publish
                    // lost while NATS reconnected is otherwise only noticed at the next event).
                    if quiet && let Err(e) = self.fill(&nats, &mut cursor, i64::MAX, page).await {
                        tracing::debug!(error = %e, "event log not reachable");
                    }
                    quiet = true;
                    self.sessions.lock().unwrap().retain(|_, tx| tx.receiver_count() > 0);
                }
            }
        }
    }

    /// Emits every event after `cursor` up to `upto` from the log, in order.
    async fn fill(&self, nats: &async_nats::Client, cursor: &mut i64, upto: i64, page: i64) -> Result<(), ApiError> {
        while *cursor < upto {
            let limit = page.min(upto - *cursor);
            let r = since(
                nats,
                &SinceRequest {
                    seq: *cursor,
                    limit: Some(limit),
                    ..Default::default()
                },
            )
            .await?;
            let short = (r.events.len() as i64) < limit;
            for e in r.events.into_iter().filter(|e| e.seq <= upto) {
                self.emit(e, cursor);
            }
            if short {
                break;
            }
        }
        Ok(())
    }

    fn emit(&self, event: Event, cursor: &mut i64) {
        *cursor = event.seq;
        let seq = event.seq;
        let session = event.session_id.clone();
        let live = Arc::new(Live::new(event));
        // Under the lock [`Hub::subscribe`] takes: a new stream's head and its channel agree.
        let mut sessions = self.sessions.lock().unwrap();
        if let Some(session) = session
            && let Some(tx) = sessions.get(&session)
            && tx.send(live.clone()).is_err()
        {
            sessions.remove(&session);
        }
        // An error only means no client is listening.
        let _ = self.tx.send(live);
        self.head.store(seq, Ordering::Release);
    }

    /// A stream's live events and the seq of the last event emitted before them. A session's
    /// stream gets its session's channel (`dense` false: only its events, each once, in order);
    /// any other stream, or one that starts before the hub knows the log's head, gets every
    /// event (`dense`: seqs follow one another, so a gap shows).
    fn subscribe(&self, session: Option<&str>) -> (broadcast::Receiver<Arc<Live>>, i64, bool) {
        let mut sessions = self.sessions.lock().unwrap();
        let head = self.head.load(Ordering::Acquire);
        match session {
            Some(session) if head >= 0 => {
                let tx = sessions
                    .entry(session.to_string())
                    .or_insert_with(|| broadcast::channel(SESSION_CAPACITY).0);
                (tx.subscribe(), head, false)
            }
            _ => (self.tx.subscribe(), head, true),
        }
    }
}

/// The hub's poll of the log: not traced (it would be a trace every time it looks).
async fn since(nats: &async_nats::Client, req: &SinceRequest) -> Result<SinceResponse, ApiError> {
    let call = relay_bus::client::call::<rpc::EventSince>(nats, req, REQUEST_TIMEOUT);
    Ok(relay_bus::trace::untraced(call).await?)
}

/// The highest committed seq of the event log.
async fn log_head(nats: &async_nats::Client, timeout: Duration) -> Result<i64, ApiError> {
    let req = SinceRequest {
        seq: 0,
        limit: Some(1),
        ..Default::default()
    };
    let call = relay_bus::client::call::<rpc::EventSince>(nats, &req, timeout);
    Ok(relay_bus::trace::untraced(call).await?.head_seq)
}

/// Query parameters of every SSE route (seed 003 §3.2).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamParams {
    /// Comma-separated event types.
    pub types: Option<String>,
    /// Unix ms: start with the first event at or after this time.
    pub since: Option<i64>,
    /// Resume after this seq (as `Last-Event-ID`); 0 replays the whole log.
    pub offset: Option<i64>,
}

/// What one stream wants to see.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub types: Option<Vec<String>>,
    pub agent: Option<String>,
    pub session: Option<String>,
    /// `?since=`: events stamped earlier are skipped even when their seq comes later.
    pub since_ts: Option<i64>,
    /// The caller's workspace, when its key confines it to one.
    pub workspace: Option<String>,
}

impl Filter {
    fn matches(&self, e: &Event) -> bool {
        self.types.as_ref().is_none_or(|t| t.contains(&e.event_type))
            && self.agent.as_ref().is_none_or(|a| {
                e.agent_name.as_deref() == Some(a.as_str()) || e.agent_id.as_deref() == Some(a.as_str())
            })
            && self
                .session
                .as_ref()
                .is_none_or(|s| e.session_id.as_deref() == Some(s.as_str()))
            && self.since_ts.is_none_or(|ts| e.ts >= ts)
            && self.workspace.as_ref().is_none_or(|w| {
                e.workspace
                    .as_deref()
                    .unwrap_or(relay_contracts::context::DEFAULT_WORKSPACE)
                    == w
            })
    }

    fn since_request(&self, seq: i64, limit: i64) -> SinceRequest {
        SinceRequest {
            seq,
            types: self.types.clone(),
            agents: self.agent.clone().map(|a| vec![a]),
            session_ids: self.session.clone().map(|s| vec![s]),
            limit: Some(limit),
        }
    }
}

#[utoipa::path(get, path = "/events/sse", tag = "events", params(StreamParams, ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this seq (wins over offset)")), responses((status = 200, description = "Events as `event: <type>`, `id: <seq>`, `data: <event JSON>`; `: heartbeat` comments while idle", content_type = "text/event-stream", body = String), (status = 400, description = "Invalid offset, since or Last-Event-ID", body = relay_contracts::WireError), (status = 401, description = "Missing or wrong bearer token", body = relay_contracts::WireError), (status = 503, description = "At the connection cap (Retry-After)", body = relay_contracts::WireError)))]
pub async fn all_events(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<StreamParams>,
) -> Result<impl IntoResponse, ApiError> {
    open(state, headers, params, Filter::default()).await
}

#[utoipa::path(get, path = "/agents/{name}/events/sse", tag = "events", params(("name" = String, Path, description = "Agent name or id"), StreamParams, ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this seq (wins over offset)")), responses((status = 200, description = "Events as `event: <type>`, `id: <seq>`, `data: <event JSON>`; `: heartbeat` comments while idle", content_type = "text/event-stream", body = String), (status = 400, description = "Invalid offset, since or Last-Event-ID", body = relay_contracts::WireError), (status = 401, description = "Missing or wrong bearer token", body = relay_contracts::WireError), (status = 503, description = "At the connection cap (Retry-After)", body = relay_contracts::WireError)))]
pub async fn agent_events(
    State(state): State<AppState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    Query(params): Query<StreamParams>,
) -> Result<impl IntoResponse, ApiError> {
    let filter = Filter {
        agent: Some(agent),
        ..Default::default()
    };
    open(state, headers, params, filter).await
}

#[utoipa::path(get, path = "/sessions/{id}/events/sse", tag = "events", params(("id" = String, Path, description = "Session id"), StreamParams, ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this seq (wins over offset)")), responses((status = 200, description = "Events as `event: <type>`, `id: <seq>`, `data: <event JSON>`; `: heartbeat` comments while idle", content_type = "text/event-stream", body = String), (status = 400, description = "Invalid offset, since or Last-Event-ID", body = relay_contracts::WireError), (status = 401, description = "Missing or wrong bearer token", body = relay_contracts::WireError), (status = 503, description = "At the connection cap (Retry-After)", body = relay_contracts::WireError)))]
pub async fn session_events(
    State(state): State<AppState>,
    Path(session): Path<String>,
    headers: HeaderMap,
    Query(params): Query<StreamParams>,
) -> Result<impl IntoResponse, ApiError> {
    let filter = Filter {
        session: Some(session),
        ..Default::default()
    };
    open(state, headers, params, filter).await
}

#[utoipa::path(get, path = "/channels/{name}/events/sse", tag = "events", params(("name" = String, Path, description = "Channel name (without #)", max_length = 40, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"), StreamParams, ("Last-Event-ID" = Option<i64>, Header, description = "Resume after this seq (wins over offset)")), responses((status = 200, description = "The channel's `message.exchanged` events as `event: <type>`, `id: <seq>`, `data: <event JSON>`; `: heartbeat` comments while idle", content_type = "text/event-stream", body = String), (status = 400, description = "Invalid channel name, offset, since or Last-Event-ID", body = relay_contracts::WireError), (status = 401, description = "Missing or wrong bearer token", body = relay_contracts::WireError), (status = 503, description = "At the connection cap (Retry-After)", body = relay_contracts::WireError)))]
pub async fn channel_events(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Query(params): Query<StreamParams>,
) -> Result<impl IntoResponse, ApiError> {
    let channel = relay_contracts::messaging::channel_of(&name)
        .ok_or_else(|| ApiError::Invalid(format!("{name:?} is not a channel name")))?;
    // A channel's messages are logged with the conversation (`#name`) as their stream.
    let filter = Filter {
        session: Some(format!("#{channel}")),
        types: Some(vec![
            <relay_contracts::session::events::MessageExchanged as relay_contracts::session::EventPayload>::TYPE
                .to_string(),
        ]),
        ..Default::default()
    };
    open(state, headers, params, filter).await
}

/// Where a stream starts: after a seq (`Last-Event-ID` wins over `offset`), at a time, or live.
pub(crate) enum Start {
    After(i64),
    At(i64),
    Live,
}

fn start_of(headers: &HeaderMap, params: &StreamParams) -> Result<Start, ApiError> {
    if let Some(v) = headers.get("last-event-id") {
        let seq = v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|s| *s >= 0)
            .ok_or_else(|| ApiError::Invalid("Last-Event-ID must be an event seq (a non-negative integer)".into()))?;
        return Ok(Start::After(seq));
    }
    match (params.offset, params.since) {
        (Some(o), _) if o < 0 => Err(ApiError::Invalid("offset must not be negative".into())),
        (Some(o), _) => Ok(Start::After(o)),
        (None, Some(ts)) => Ok(Start::At(ts)),
        (None, None) => Ok(Start::Live),
    }
}

/// Resolves when the key of the current request is revoked (never for the shared token).
fn revocation_of(state: &AppState) -> impl std::future::Future<Output = ()> + Send + 'static {
    let key_id = crate::auth::current_key();
    let mut revoked = state.keys.revoked.subscribe();
    async move {
        let Some(key_id) = key_id else {
            return std::future::pending().await;
        };
        loop {
            match revoked.recv().await {
                Ok(id) if id == key_id => return,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return std::future::pending().await,
                _ => {}
            }
        }
    }
}

/// Counts an open stream; dropping it (the client task ended) gives the slot back.
struct Slot(Arc<Metrics>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.sse_connections.dec();
    }
}

async fn open(
    state: AppState,
    headers: HeaderMap,
    params: StreamParams,
    mut filter: Filter,
) -> Result<impl IntoResponse, ApiError> {
    filter.types = params
        .types
        .as_deref()
        .map(|t| {
            t.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.is_empty());
    let start = start_of(&headers, &params)?;
    // Frames are filtered here too: catch-ups and the live hub read the log as the gateway.
    filter.workspace = relay_bus::context::outgoing().scope().map(String::from);
    let rx = follow(&state, start, filter)?;
    let heartbeat = Duration::from_millis(state.settings.sse_heartbeat_ms.max(1));
    // Frames are rendered once by the hub and shared; whatever is queued when the client's
    // connection is ready goes out as one chunk, so a busy stream costs one write per burst
    // rather than one per event.
    // One buffer per stream, reused for every burst.
    let ready = Vec::with_capacity(COALESCE);
    // A stream opened with a key ends when that key is revoked.
    let revoked = revocation_of(&state);
    let stream = futures::stream::unfold((rx, ready), move |(mut rx, mut ready)| async move {
        let chunk = match tokio::time::timeout(heartbeat, rx.recv_many(&mut ready, COALESCE)).await {
            Err(_) => Bytes::from_static(b": heartbeat\n\n"),
            Ok(0) => return None,
            Ok(1) => ready[0].frame.clone(),
            Ok(_) => {
                let mut chunk = BytesMut::with_capacity(ready.iter().map(|l| l.frame.len()).sum());
                for live in &ready {
                    chunk.extend_from_slice(&live.frame);
                }
                chunk.freeze()
            }
        };
        ready.clear();
        Some((Ok::<_, Infallible>(chunk), (rx, ready)))
    })
    .take_until(Box::pin(revoked));
    Ok((HEADERS, axum::body::Body::from_stream(stream)))
}

/// The headers of every event stream the gateway serves.
pub(crate) const HEADERS: [(&str, &str); 3] = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
];

/// An event stream of the frames a task sends on `rx` (an AG-UI run, an A2A task), until it
/// drops its sender.
pub(crate) fn from_channel(rx: mpsc::Receiver<Bytes>) -> axum::response::Response {
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    (HEADERS, axum::body::Body::from_stream(stream)).into_response()
}

/// Most frames one SSE write carries.
const COALESCE: usize = 64;

/// Opens one event stream (an SSE response or a gRPC `EventService.Subscribe`): the matching
/// events from `start` on, in seq order, each once. Streams count against
/// `gateway.sse_max_connections`; the slot is given back when the receiver is dropped.
pub(crate) fn follow(
    state: &AppState,
    start: Start,
    mut filter: Filter,
) -> Result<mpsc::Receiver<Arc<Live>>, ApiError> {
    if let Start::At(ts) = start {
        filter.since_ts = Some(ts);
    }
    let metrics = state.metrics.clone();
    if metrics.sse_connections.inc() as usize >= state.settings.sse_max_connections {
        metrics.sse_connections.dec();
        metrics.sse_rejected.inc();
        return Err(ApiError::Busy(format!(
            "{} event streams are open, the configured maximum",
            state.settings.sse_max_connections
        )));
    }
    let slot = Slot(metrics);
    // Subscribe before replaying, so nothing published during the replay is missed.
    let (live, head, dense) = state.hub.subscribe(filter.session.as_deref());
    let (tx, rx) = mpsc::channel(state.settings.sse_client_buffer.max(1));
    let client = Client {
        nats: state.nats.clone(),
        filter,
        page: state.settings.sse_replay_page,
        timeout: state.timeout(),
        tx,
        slot,
        dense,
    };
    tokio::spawn(client.run(start, head, live));
    Ok(rx)
}

struct Client {
    nats: async_nats::Client,
    filter: Filter,
    page: i64,
    timeout: Duration,
    tx: mpsc::Sender<Arc<Live>>,
    slot: Slot,
    /// Following every event (a gap in the seqs means missed events), or only a session's.
    dense: bool,
}

/// Why a stream ends: the client went away, or the log could not be read.
struct Gone;

impl Client {
    async fn run(self, start: Start, head: i64, mut live: broadcast::Receiver<Arc<Live>>) {
        let mut cursor = match start {
            Start::After(seq) => seq,
            Start::At(ts) => match self.first_seq_at(ts).await {
                Ok(seq) => seq,
                Err(_) => return,
            },
            Start::Live => match head {
                head if head >= 0 => head,
                // The hub has not read the head yet: ask the log.
                _ => match self.log_head().await {
                    Ok(head) => head,
                    Err(_) => return,
                },
            },
        };
        if !matches!(start, Start::Live) && self.replay(&mut cursor).await.is_err() {
            return;
        }
        loop {
            let next = tokio::select! {
                _ = self.tx.closed() => return,
                next = live.recv() => next,
            };
            match next {
                Ok(l) if l.event.seq <= cursor => {}
                Ok(l) if l.event.seq == cursor + 1 || !self.dense => {
                    cursor = l.event.seq;
                    if self.filter.matches(&l.event) && self.send(l).await.is_err() {
                        return;
                    }
                }
                // Ahead of us (we started live before the hub knew the head): read the rest.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    self.slot.0.sse_catch_ups.inc();
                    if self.replay(&mut cursor).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Sends every matching event after `cursor` up to the log's head.
    async fn replay(&self, cursor: &mut i64) -> Result<(), Gone> {
        loop {
            let req = self.filter.since_request(*cursor, self.page);
            let page: SinceResponse =
                match relay_bus::client::call::<rpc::EventSince>(&self.nats, &req, self.timeout).await {
                    Ok(p) => p,
                    Err(e) => {
                        // Ending the stream is honest: the client reconnects with Last-Event-ID.
                        tracing::warn!(error = %e, "SSE replay failed; closing the stream");
                        return Err(Gone);
                    }
                };
            let short = (page.events.len() as i64) < self.page;
            let empty = page.events.is_empty();
            for event in page.events.into_iter().filter(|e| self.filter.matches(e)) {
                self.send(Arc::new(Live::new(event))).await?;
            }
            *cursor = page.next_seq.max(*cursor);
            if short || empty {
                return Ok(());
            }
        }
    }

    /// The seq just before the first event at or after `ts`; the head when there is none yet.
    async fn first_seq_at(&self, ts: i64) -> Result<i64, Gone> {
        let f = &self.filter;
        let req = QueryRequest {
            types: f.types.clone(),
            agents: f.agent.clone().map(|a| vec![a]),
            session_ids: f.session.clone().map(|s| vec![s]),
            since: Some(ts),
            limit: Some(1),
            ..Default::default()
        };
        match relay_bus::client::call::<rpc::EventQuery>(&self.nats, &req, self.timeout).await {
            Ok(r) => match r.events.first() {
                Some(e) => Ok(e.seq - 1),
                None => self.log_head().await,
            },
            Err(e) => {
                tracing::warn!(error = %e, "SSE start by time failed; closing the stream");
                Err(Gone)
            }
        }
    }

    async fn log_head(&self) -> Result<i64, Gone> {
        match log_head(&self.nats, self.timeout).await {
            Ok(head) => Ok(head),
            Err(e) => {
                tracing::warn!(error = %e, "event log not reachable; closing the stream");
                Err(Gone)
            }
        }
    }

    async fn send(&self, live: Arc<Live>) -> Result<(), Gone> {
        self.tx.send(live).await.map_err(|_| Gone)?;
        self.slot.0.sse_events.inc();
        Ok(())
    }
}
