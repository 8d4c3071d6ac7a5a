//! Event ingestion: every agent and session event, validated, redacted, given a global seq and
//! a per-session order, committed to Postgres, then published live. Queryable and replayable
//! from any seq.

mod error;
mod owners;
mod redact;
mod store;

pub use error::IngestError;

use error::Result;
use relay_bus::service::{ServiceError, ServiceHost};
use relay_bus::settings::{DatabaseSettings, NatsSettings, TelemetrySettings};
use relay_contracts::RequestContext;
use relay_contracts::events::*;
use relay_contracts::rpc;
use relay_contracts::subjects::event as subjects;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use store::{Filter, Prepared};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: NatsSettings,
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub ingest: IngestSettings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct IngestSettings {
    /// Events older than this (by `ts`) are deleted by the retention job. Default 7 days.
    pub retention_ms: i64,
    pub retention_interval_ms: u64,
    /// Rows per retention delete: small enough that appends never queue behind it.
    pub retention_batch: i64,
    /// Most events one append request may carry.
    pub max_request_events: usize,
    /// Most events the writer commits in one transaction (several requests are grouped).
    pub max_commit_events: usize,
    pub default_page_size: i64,
    pub max_page_size: i64,
    /// Pages are cut short to stay under this many bytes of JSON: a NATS message carries at
    /// most the server's max_payload (1 MiB by default). The reply says where to go on from.
    pub max_reply_bytes: usize,
    pub redaction: RedactionSettings,
}

impl Default for IngestSettings {
    fn default() -> Self {
        IngestSettings {
            retention_ms: 7 * 24 * 3600 * 1000,
            retention_interval_ms: 60_000,
            retention_batch: 5_000,
            max_request_events: 10_000,
            max_commit_events: 20_000,
            default_page_size: 500,
            max_page_size: 10_000,
            max_reply_bytes: 900_000,
            redaction: RedactionSettings::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RedactionSettings {
    pub enabled: bool,
    /// Regexes; named groups `pre`/`post` are kept around `[REDACTED]`.
    pub patterns: Vec<String>,
    /// Event-type prefixes whose payload strings are scrubbed.
    pub types: Vec<String>,
}

impl Default for RedactionSettings {
    fn default() -> Self {
        RedactionSettings {
            enabled: true,
            patterns: redact::DEFAULT_PATTERNS
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            types: redact::DEFAULT_TYPES
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
        }
    }
}

/// One append request waiting for the writer.
struct Job {
    events: Vec<Prepared>,
    reply: oneshot::Sender<Result<Vec<Appended>>>,
    /// The appending request's span: its events are published live in its trace.
    span: tracing::Span,
}

/// Committed events on their way to be published, each with the span of the request that
/// appended it.
type Live = Vec<(Event, tracing::Span)>;

/// Pairs newly committed events with the span of the job that brought each.
fn with_spans(events: Vec<Event>, jobs: &[Job]) -> Live {
    let spans: std::collections::HashMap<&str, &tracing::Span> = jobs
        .iter()
        .flat_map(|j| j.events.iter().map(move |e| (e.event_id.as_str(), &j.span)))
        .collect();
    events
        .into_iter()
        .map(|e| {
            let span = spans
                .get(e.event_id.as_str())
                .map_or_else(tracing::Span::none, |s| (*s).clone());
            (e, span)
        })
        .collect()
}

/// Handler state.
#[derive(Clone)]
pub struct Ingest {
    db: PgPool,
    writer: mpsc::Sender<Job>,
    redactor: Option<Arc<redact::Redactor>>,
    owners: owners::Owners,
    settings: Arc<IngestSettings>,
}

impl Ingest {
    /// Starts the writer (group commit) and the retention job.
    pub fn start(
        db: PgPool,
        nats: async_nats::Client,
        settings: IngestSettings,
    ) -> std::result::Result<Self, regex::Error> {
        let redactor = match settings.redaction.enabled {
            true => Some(Arc::new(redact::Redactor::new(
                &settings.redaction.patterns,
                &settings.redaction.types,
            )?)),
            false => None,
        };
        let (tx, rx) = mpsc::channel(1024);
        // The publisher runs beside the writer, so the next commit need not wait for the
        // previous one's events to go out; the channel keeps them in seq order.
        let (live_tx, live_rx) = mpsc::channel(64);
        let owners = owners::Owners::new(nats.clone());
        tokio::spawn(publisher(nats, live_rx));
        tokio::spawn(writer(db.clone(), live_tx, rx, settings.max_commit_events));
        tokio::spawn(retention(db.clone(), settings.clone()));
        Ok(Ingest {
            db,
            writer: tx,
            redactor,
            owners,
            settings: Arc::new(settings),
        })
    }
}

/// The single writer of this replica: takes every queued request (up to `max` events), commits
/// them in one transaction, answers each caller, then publishes the new events in seq order.
async fn writer(db: PgPool, live: mpsc::Sender<Live>, mut rx: mpsc::Receiver<Job>, max: usize) {
    while let Some(first) = rx.recv().await {
        let mut jobs = vec![first];
        let mut n = jobs[0].events.len();
        while n < max {
            match rx.try_recv() {
                Ok(job) => {
                    n += job.events.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        let batch: Vec<&Prepared> = jobs.iter().flat_map(|j| j.events.iter()).collect();
        let result = match db.acquire().await {
            Ok(mut conn) => store::append(&mut conn, &batch).await,
            Err(e) => Err(e.into()),
        };
        match result {
            Ok((appended, events)) => {
                let events = with_spans(events, &jobs);
                let mut rest = appended.into_iter();
                for job in jobs {
                    let mine: Vec<Appended> = rest.by_ref().take(job.events.len()).collect();
                    let _ = job.reply.send(Ok(mine));
                }
                let _ = live.send(events).await;
            }
            // A transient failure fails the group: every caller may retry. Anything else is
            // retried request by request, so one bad request cannot fail the others with it.
            Err(e) if e.is_transient() || jobs.len() == 1 => {
                tracing::error!(error = %e, events = batch.len(), "append transaction failed");
                let retryable = e.is_transient();
                for job in jobs {
                    let _ = job.reply.send(Err(IngestError::CommitFailed { retryable }));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, requests = jobs.len(), "group commit failed; committing requests one by one");
                for job in jobs {
                    let result = match db.acquire().await {
                        Ok(mut conn) => store::append(&mut conn, &job.events.iter().collect::<Vec<_>>()).await,
                        Err(e) => Err(e.into()),
                    };
                    match result {
                        Ok((appended, events)) => {
                            let events = with_spans(events, std::slice::from_ref(&job));
                            let _ = job.reply.send(Ok(appended));
                            let _ = live.send(events).await;
                        }
                        Err(e) => {
                            tracing::error!(error = %e, events = job.events.len(), "append transaction failed");
                            let _ = job.reply.send(Err(IngestError::CommitFailed {
                                retryable: e.is_transient(),
                            }));
                        }
                    }
                }
            }
        }
    }
}

/// An upper bound of the JSON size of `v`: cheap when small, exact when it might be near
/// `budget` (an escaped string is at most 6 bytes per input byte).
fn json_len(v: &serde_json::Value, budget: usize) -> usize {
    fn rough(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::String(s) => s.len() + 2,
            serde_json::Value::Array(a) => 2 + a.iter().map(|x| rough(x) + 1).sum::<usize>(),
            serde_json::Value::Object(m) => 2 + m.iter().map(|(k, x)| k.len() + 4 + rough(x)).sum::<usize>(),
            _ => 24,
        }
    }
    let bound = rough(v) * 6;
    if bound < budget {
        return bound;
    }
    serde_json::to_vec(v).map_or(usize::MAX, |b| b.len())
}

/// Publishes committed events live, in seq order: every event on `event.committed.<type>`,
/// and an agent's event about a session also on the `session.event` catch-all (seed 002), so one
/// subscription sees all of a session. `session.*` events are the registry's, which publishes
/// them there itself.
async fn publisher(nats: async_nats::Client, mut rx: mpsc::Receiver<Live>) {
    while let Some(events) = rx.recv().await {
        for (e, span) in &events {
            publish_live(&nats, e).instrument(span.clone()).await;
        }
    }
}

async fn publish_live(nats: &async_nats::Client, e: &Event) {
    let mut published = relay_bus::client::publish(nats, subjects::committed_subject(&e.event_type), e).await;
    if let Some(session_id) = &e.session_id
        && !e.event_type.starts_with("session.")
        && published.is_ok()
    {
        let envelope = relay_contracts::session::SessionEvent {
            event_id: e.event_id.clone(),
            session_id: session_id.clone(),
            timestamp: e.ts,
            event_type: e.event_type.clone(),
            payload: e.payload.clone(),
            seq: Some(e.seq),
        };
        published = relay_bus::client::publish(nats, relay_contracts::subjects::session::EVENT.into(), &envelope).await;
    }
    if let Err(err) = published {
        tracing::warn!(seq = e.seq, error = %err, "event committed but not published live");
    }
}

/// Deletes expired events in small batches, forever.
async fn retention(db: PgPool, settings: IngestSettings) {
    let mut tick = tokio::time::interval(Duration::from_millis(settings.retention_interval_ms.max(10)));
    loop {
        tick.tick().await;
        let cutoff = relay_bus::now_ms() - settings.retention_ms;
        let mut deleted = 0u64;
        loop {
            match store::expire(&db, cutoff, settings.retention_batch).await {
                Ok(n) => {
                    deleted += n;
                    if (n as i64) < settings.retention_batch {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "retention pass failed; retrying next interval");
                    break;
                }
            }
        }
        if deleted > 0 {
            tracing::info!(deleted, cutoff, "retention removed expired events");
        }
    }
}

pub const SERVICE_NAME: &str = "event-ingest";

/// Room for an event's envelope beside its payload: ids, type and names are at most 256
/// bytes each (escaped, up to 6×), plus numbers and keys.
const ENVELOPE_BYTES: usize = 5 * 256 * 6 + 512;

/// An append's reply lists every event: `{"eventId":…,"seq":…,"duplicate":…}`.
const REPLY_BYTES_PER_EVENT: usize = 64;

pub async fn serve(nats: async_nats::Client, ingest: Ingest) -> std::result::Result<ServiceHost<Ingest>, ServiceError> {
    let mut host = ServiceHost::start(
        nats,
        SERVICE_NAME,
        env!("CARGO_PKG_VERSION"),
        "The event log (event.* subjects)",
        ingest,
    )
    .await?;
    host.serve::<rpc::EventAppend>(append).await?;
    host.serve::<rpc::EventQuery>(query).await?;
    host.serve::<rpc::EventSince>(since).await?;
    host.serve::<rpc::AuditList>(audit_list).await?;
    host.serve::<rpc::EventPurgeSession>(purge_session).await?;
    Ok(host)
}

/// Validates every event (all or nothing), redacts, and waits for the commit.
pub async fn append(ingest: Ingest, ctx: RequestContext, req: AppendRequest) -> Result<AppendResponse> {
    let mut events = req.into_events();
    // A harness writes its own agent's events only: they are stamped with its agent id.
    if let Some(own) = &ctx.agent {
        for e in &mut events {
            match &e.agent_id {
                Some(named) if named != own => {
                    return Err(IngestError::Forbidden(format!(
                        "agent {own} cannot append events of agent {named}"
                    )));
                }
                _ => e.agent_id = Some(own.clone()),
            }
        }
    }
    if events.is_empty() {
        return Err(IngestError::Invalid("no events to append".into()));
    }
    if events.len() > ingest.settings.max_request_events {
        return Err(IngestError::Invalid(format!(
            "{} events in one request; at most {}",
            events.len(),
            ingest.settings.max_request_events
        )));
    }
    ingest.owners.check(&ctx, &events).await?;
    let mut problems = Vec::new();
    let now = relay_bus::now_ms();
    let mut prepared = Vec::with_capacity(events.len());
    for (i, e) in events.into_iter().enumerate() {
        if let Err(reason) = validate(&e) {
            problems.push(serde_json::json!({ "index": i, "type": e.event_type, "reason": reason }));
            continue;
        }
        if e.event_id.as_ref().is_some_and(|id| id.is_empty() || id.len() > 256) {
            problems.push(serde_json::json!({ "index": i, "reason": "eventId must be 1 to 256 characters" }));
            continue;
        }
        let mut payload = e.payload;
        if let Some(r) = &ingest.redactor
            && r.applies_to(&e.event_type)
        {
            r.scrub(&mut payload);
        }
        // What cannot be read back in one page must not be stored: replay would stop at it.
        let size = json_len(&payload, ingest.settings.max_reply_bytes) + ENVELOPE_BYTES;
        if size > ingest.settings.max_reply_bytes {
            let max = ingest.settings.max_reply_bytes;
            problems.push(serde_json::json!({ "index": i, "reason": format!("event of about {size} bytes exceeds the {max} bytes a replay page can carry") }));
            continue;
        }
        // A person's or an agent's events are their own workspace's; a service says which.
        let workspace = match ctx.scope() {
            Some(own) => own.to_string(),
            None => e
                .workspace
                .clone()
                .unwrap_or_else(|| relay_contracts::context::DEFAULT_WORKSPACE.to_string()),
        };
        prepared.push(Prepared {
            workspace,
            event_id: e.event_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
            event_type: e.event_type,
            ts: e.ts.unwrap_or(now),
            session_id: e.session_id,
            agent_name: e.agent_name,
            agent_id: e.agent_id,
            payload,
        });
    }
    // The reply must fit one NATS message too, or the caller would see an error for an
    // append that was committed.
    let reply_bytes: usize = prepared.iter().map(|e| e.event_id.len() + REPLY_BYTES_PER_EVENT).sum();
    if problems.is_empty() && reply_bytes > ingest.settings.max_reply_bytes {
        return Err(IngestError::Invalid(format!(
            "the reply to {} events would be about {reply_bytes} bytes, more than one NATS message; send fewer per request",
            prepared.len()
        )));
    }
    if !problems.is_empty() {
        return Err(IngestError::InvalidEvents {
            message: format!("{} invalid event(s); nothing was stored", problems.len()),
            details: serde_json::json!({ "problems": problems }),
        });
    }
    let (reply, answer) = oneshot::channel();
    ingest
        .writer
        .send(Job {
            events: prepared,
            reply,
            span: tracing::Span::current(),
        })
        .await
        .map_err(|_| IngestError::WriterGone)?;
    let appended = answer.await.map_err(|_| IngestError::WriterGone)??;
    Ok(AppendResponse { appended })
}

fn page_size(ingest: &Ingest, limit: Option<i64>) -> Result<i64> {
    let max = ingest.settings.max_page_size;
    let limit = limit.unwrap_or(ingest.settings.default_page_size);
    if !(1..=max).contains(&limit) {
        return Err(IngestError::Invalid(format!("limit must be between 1 and {max}")));
    }
    Ok(limit)
}

/// A list filter; an empty list filters nothing, as an absent one does (a gRPC caller cannot send
/// "absent" for a repeated field, and "match no type" is never what a caller means).
fn any_of(list: &Option<Vec<String>>) -> Option<&[String]> {
    list.as_deref().filter(|l| !l.is_empty())
}

pub async fn query(ingest: Ingest, ctx: RequestContext, req: QueryRequest) -> Result<QueryResponse> {
    let limit = page_size(&ingest, req.limit)?;
    let filter = Filter {
        types: any_of(&req.types),
        agents: any_of(&req.agents),
        session_ids: any_of(&req.session_ids),
        since_ts: req.since,
        until_ts: req.until,
        workspace: ctx.scope(),
    };
    let mut events = if req.newest_first == Some(true) {
        store::page_back(&ingest.db, &filter, req.cursor, limit).await?
    } else {
        store::page(&ingest.db, &filter, req.cursor.unwrap_or(0), limit).await?
    };
    let cut = relay_bus::fit_json(&mut events, ingest.settings.max_reply_bytes);
    let full = cut || events.len() as i64 == limit;
    let next_cursor = if full { events.last().map(|e| e.seq) } else { None };
    Ok(QueryResponse { events, next_cursor })
}

/// `audit.list`: the log's `audit.recorded` events of the caller's workspace.
pub async fn audit_list(
    ingest: Ingest,
    ctx: RequestContext,
    req: relay_contracts::audit::ListAuditRequest,
) -> Result<QueryResponse> {
    let types = vec![relay_contracts::audit::AUDIT_RECORDED.to_string()];
    let query = QueryRequest {
        types: Some(types),
        since: req.since,
        until: req.until,
        limit: req.limit,
        cursor: req.cursor,
        ..QueryRequest::default()
    };
    self::query(ingest, ctx, query).await
}

pub async fn since(ingest: Ingest, ctx: RequestContext, req: SinceRequest) -> Result<SinceResponse> {
    if req.seq < 0 {
        return Err(IngestError::Invalid("seq must not be negative".into()));
    }
    let limit = page_size(&ingest, req.limit)?;
    if let Some(agent) = &ctx.agent {
        own_sessions(&ingest, agent, req.session_ids.as_deref()).await?;
    }
    // Read the head first: every event up to it is committed, so the page is gap-free up to it.
    let head_seq = store::head(&ingest.db).await?;
    let filter = Filter {
        types: any_of(&req.types),
        agents: any_of(&req.agents),
        session_ids: any_of(&req.session_ids),
        since_ts: None,
        until_ts: None,
        workspace: ctx.scope(),
    };
    let mut events = store::page(&ingest.db, &filter, req.seq, limit).await?;
    let cut = relay_bus::fit_json(&mut events, ingest.settings.max_reply_bytes);
    // A short page means every event up to the head was looked at, matching or not.
    let last = events.last().map_or(req.seq, |e| e.seq);
    let next_seq = if !cut && (events.len() as i64) < limit {
        last.max(head_seq)
    } else {
        last
    };
    Ok(SinceResponse {
        events,
        next_seq,
        head_seq,
    })
}

/// A harness reads only the sessions its agent is in (a lead following the workers it
/// spawned into its own): it names them, and its agent has events in each.
async fn own_sessions(ingest: &Ingest, agent: &str, sessions: Option<&[String]>) -> Result<()> {
    let Some(sessions) = sessions.filter(|s| !s.is_empty()) else {
        return Err(IngestError::Forbidden(format!(
            "agent {agent} reads only its own session's events: name it in sessionIds"
        )));
    };
    for session in sessions {
        if !store::agent_in_session(&ingest.db, agent, session).await? {
            return Err(IngestError::Forbidden(format!(
                "agent {agent} is not in session {session}; it reads only its own session's events"
            )));
        }
    }
    Ok(())
}

pub async fn purge_session(
    ingest: Ingest,
    _ctx: RequestContext,
    req: PurgeSessionRequest,
) -> Result<PurgeSessionResponse> {
    Ok(PurgeSessionResponse {
        events_deleted: store::purge_session(&ingest.db, &req.session_id).await?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_config_file_loads_with_the_default_ingest_settings() {
        let loaded: Settings = relay_bus::settings::load_example().unwrap();
        let d = IngestSettings::default();
        assert_eq!(loaded.ingest.retention_ms, d.retention_ms);
        assert_eq!(loaded.ingest.max_reply_bytes, d.max_reply_bytes);
        assert_eq!(loaded.ingest.redaction.types, d.redaction.types);
        assert_eq!(
            loaded.ingest.redaction.patterns, d.redaction.patterns,
            "defaults kept when not set"
        );
    }
}
