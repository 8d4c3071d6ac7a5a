//! Forwards a service's outbox table of events to the event log (event-ingest), oldest first.
//!
//! A service writes its events to its outbox (`registry_events`, `delivery_events`) in the same
//! transaction as the change they report; this loop appends them to `event.append` and marks
//! them forwarded. The log deduplicates on the event id, so a crash between the two steps
//! re-sends harmlessly. An advisory lock per outbox lets one replica forward at a time, which
//! keeps the log in commit order.
//!
//! An outbox table has the columns `seq, event_id, session_id, type, ts, payload, traceparent,
//! workspace, forwarded, forward_error`; the agent id, when there is one, is the payload's
//! `agentId`.
//!
//! Forwarded rows are deleted once they are `database.outbox_keep_ms` old (an hour by default),
//! so an outbox holds only what is on its way plus a recent window, whatever the load; an
//! outbox its service also reads (the registry's session history) keeps them (`prune: false`).

use relay_contracts::events::{AppendRequest, AppendResponse, NewEvent};
use relay_contracts::rpc::EventAppend;
use relay_contracts::{ErrorCode, WireError};
use sqlx::PgPool;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const BATCH: i64 = 500;
/// Pending rows from which the forwarder mixes traces in one append (it is behind).
const BEHIND: usize = 64;
/// Bytes of events per append: well under the NATS max_payload (1 MiB by default).
const BATCH_BYTES: usize = 512 * 1024;
const TIMEOUT: Duration = Duration::from_secs(5);

/// One outbox table and how its rows become log events.
#[derive(Debug, Clone, Copy)]
pub struct Outbox {
    pub table: &'static str,
    /// Prefixed to the stored type: the registry stores `created`, the log wants `session.created`.
    pub type_prefix: &'static str,
    /// Stored types (SQL `LIKE` patterns) forwarded as they are, without the prefix: entries
    /// that name their own namespace (`audit.%`).
    pub verbatim: &'static [&'static str],
    /// Advisory lock key: one forwarder per outbox at a time.
    pub lock_key: i64,
    /// Delete forwarded rows after `database.outbox_keep_ms`; false when the service reads them.
    pub prune: bool,
}

/// How long forwarded rows are kept: `database.outbox_keep_ms`, set once by `run_service`
/// (its default otherwise).
static KEEP: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();

/// Sets how long forwarded rows are kept (the first call wins; `run_service` makes it).
pub fn keep_forwarded(keep: Duration) {
    let _ = KEEP.set(keep);
}

#[derive(Debug, thiserror::Error)]
enum ForwardError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("event log: {0}")]
    Upstream(WireError),
}

impl Outbox {
    /// Writes one event to the outbox in `conn`'s transaction, to be forwarded once it commits:
    /// `payload` as a `P::TYPE` event on `stream` (a session, a channel `#ops`, `webhook:<id>`)
    /// of `workspace`, under a new id and the current trace. The one INSERT of the services
    /// whose outbox rows are written one at a time (automation, coordination).
    pub async fn write<P: relay_contracts::session::EventPayload>(
        &self,
        conn: &mut sqlx::PgConnection,
        workspace: &str,
        stream: &str,
        payload: &P,
    ) -> Result<(), sqlx::Error> {
        let sql = format!(
            "INSERT INTO {} (event_id, session_id, type, ts, payload, workspace, traceparent)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            self.table
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(stream)
            .bind(P::TYPE)
            .bind(crate::now_ms())
            .bind(sqlx::types::Json(payload))
            .bind(workspace)
            .bind(crate::trace::current_traceparent())
            .execute(conn)
            .await?;
        Ok(())
    }
}

/// Starts forwarding `outbox` when `enabled`; returns the wake-up its writers poke after each
/// commit (harmless to poke when forwarding is off).
pub fn start(outbox: Outbox, db: &PgPool, nats: &async_nats::Client, enabled: bool) -> Arc<Notify> {
    let wake = Arc::new(Notify::new());
    if enabled {
        tokio::spawn(run(outbox, db.clone(), nats.clone(), wake.clone()));
        if outbox.prune {
            let keep = *KEEP
                .get_or_init(|| Duration::from_millis(crate::settings::DatabaseSettings::default().outbox_keep_ms));
            let t = outbox.table;
            let sql = format!(
                "DELETE FROM {t} WHERE seq IN (SELECT seq FROM {t} WHERE forwarded AND ts < $1 ORDER BY seq LIMIT $2)"
            );
            crate::retention::spawn(db, outbox.table, keep, vec![sql]);
        }
    }
    wake
}

/// Runs forever: forwards whatever is pending, then sleeps until woken by a commit or 1 s.
async fn run(outbox: Outbox, db: PgPool, nats: async_nats::Client, wake: Arc<Notify>) {
    let what = format!("cannot forward events of {} to the event log yet", outbox.table);
    drain_forever(&wake, &what, || forward_batch(&outbox, &db, &nats)).await
}

/// Runs `step` forever: again at once while it made progress, when `wake` is poked or after
/// 1 s once it found nothing, and after a backoff (200 ms doubling to 2 s, reset by progress)
/// when it failed, logging `what`. The loop of every outbox relay.
pub async fn drain_forever<E, F, Fut>(wake: &Notify, what: &str, step: F)
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, E>>,
{
    repeat(wake, what, step, || async { Duration::from_secs(1) }).await
}

/// [`drain_forever`], waiting what `idle` says once a step found nothing (until the next item
/// falls due, say) instead of 1 s.
pub async fn repeat<E, F, Fut, I, IFut>(wake: &Notify, what: &str, mut step: F, mut idle: I)
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, E>>,
    I: FnMut() -> IFut,
    IFut: std::future::Future<Output = Duration>,
{
    let mut backoff = Duration::from_millis(200);
    loop {
        match step().await {
            Ok(true) => backoff = Duration::from_millis(200),
            Ok(false) => {
                let wait = idle().await;
                tokio::select! {
                    _ = wake.notified() => {}
                    _ = tokio::time::sleep(wait) => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "{what}");
                // Commits do not cut this short (that would retry at the commit rate); the cap
                // bounds how long forwarding lags once the other side is back.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// How many of the oldest pending rows (`(bytes, trace)`, in order) go in one request: the
/// first always (one bigger than a batch goes alone), then those of its trace while the bytes
/// stay within `max_bytes`. A batch is one trace's, sent in that trace.
pub fn one_trace_batch<'a>(rows: impl IntoIterator<Item = (usize, Option<&'a str>)>, max_bytes: usize) -> usize {
    let mut rows = rows.into_iter();
    let Some((mut bytes, trace)) = rows.next() else {
        return 0;
    };
    1 + rows
        .take_while(|(b, t)| {
            bytes += b;
            *t == trace && bytes <= max_bytes
        })
        .count()
}

type Row = (
    i64,
    String,
    String,
    String,
    i64,
    serde_json::Value,
    Option<String>,
    String,
);

/// Forwards the oldest pending rows (at most `BATCH`, `BATCH_BYTES`); returns whether more may
/// be pending. A part batch took all there was: a commit since has left its wake-up for the
/// next round, so looking again at once would only find nothing (a transaction per forward at
/// light load).
async fn forward_batch(outbox: &Outbox, db: &PgPool, nats: &async_nats::Client) -> Result<bool, ForwardError> {
    let mut tx = db.begin().await?;
    let mine: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(outbox.lock_key)
        .fetch_one(&mut *tx)
        .await?;
    if !mine {
        return Ok(false);
    }
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT seq, event_id, session_id,
                CASE WHEN type LIKE ANY($3) THEN type ELSE $2 || type END,
                ts, payload, traceparent, workspace FROM {}
         WHERE NOT forwarded ORDER BY seq LIMIT $1 FOR UPDATE",
        outbox.table
    )))
    .bind(BATCH)
    .bind(outbox.type_prefix)
    .bind(outbox.verbatim)
    .fetch_all(&mut *tx)
    .await?;
    if rows.is_empty() {
        return Ok(false);
    }
    let (read, more) = (rows.len(), rows.len() as i64 == BATCH);
    let mut events: Vec<NewEvent> = rows.iter().map(to_log_event).collect();
    // One event bigger than a batch goes alone; only the log's own refusal skips it. Keeping
    // up comes first: once a backlog builds (a runner killed under load left its events, say),
    // a batch takes rows of any trace, else one request per trace drained ~100 events/s and
    // the log fell half a minute behind. Then the batch is sent in its first row's trace.
    let sizes = events.iter().map(|e| serde_json::to_vec(e).map_or(0, |b| b.len()) + 1);
    let behind = rows.len() >= BEHIND;
    let take = one_trace_batch(
        sizes.zip(rows.iter().map(|r| if behind { None } else { r.6.as_deref() })),
        BATCH_BYTES,
    );
    let trace = rows[0].6.clone();
    events.truncate(take);
    let seqs: Vec<i64> = rows[..take].iter().map(|r| r.0).collect();
    let append_in_trace = |events| {
        let span = crate::trace::continuing("forward events", trace.as_deref());
        tracing::Instrument::instrument(append(nats, events), span)
    };
    match append_in_trace(events.clone()).await {
        Ok(()) => mark(outbox, &mut tx, &seqs, None).await?,
        // One bad event must not hold back the rest: send them one by one and keep the
        // reason for each the log refuses.
        Err(e) if e.code() == ErrorCode::InvalidRequest => {
            for (seq, event) in seqs.iter().zip(events) {
                let id = event.event_id.clone().unwrap_or_default();
                match append_in_trace(vec![event]).await {
                    Ok(()) => mark(outbox, &mut tx, &[*seq], None).await?,
                    Err(e) if e.code() == ErrorCode::InvalidRequest => {
                        tracing::error!(outbox = outbox.table, event_id = %id, error = %e, "event log refused an event; not retried");
                        mark(outbox, &mut tx, &[*seq], Some(&e.to_string())).await?;
                    }
                    Err(e) => return Err(ForwardError::Upstream(e)),
                }
            }
        }
        Err(e) => return Err(ForwardError::Upstream(e)),
    }
    tx.commit().await?;
    Ok(more || take < read)
}

fn to_log_event((_, event_id, session_id, event_type, ts, payload, _, workspace): &Row) -> NewEvent {
    NewEvent {
        workspace: Some(workspace.clone()),
        event_id: Some(event_id.clone()),
        event_type: event_type.clone(),
        ts: Some(*ts),
        session_id: Some(session_id.clone()),
        agent_name: None,
        agent_id: payload.get("agentId").and_then(|v| v.as_str()).map(String::from),
        payload: payload.clone(),
    }
}

async fn append(nats: &async_nats::Client, events: Vec<NewEvent>) -> Result<(), WireError> {
    let batch = AppendRequest::Batch { events };
    let _: AppendResponse = crate::client::call::<EventAppend>(nats, &batch, TIMEOUT).await?;
    Ok(())
}

async fn mark(
    outbox: &Outbox,
    conn: &mut sqlx::PgConnection,
    seqs: &[i64],
    error: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {} SET forwarded = true, forward_error = $2 WHERE seq = ANY($1)",
        outbox.table
    )))
    .bind(seqs)
    .bind(error)
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod batch_tests {
    use super::one_trace_batch;

    #[test]
    fn a_batch_is_one_traces_rows_within_the_bytes_and_never_empty() {
        let (a, b) = (Some("a"), Some("b"));
        assert_eq!(one_trace_batch([(10, a), (10, a), (10, b), (10, a)], 100), 2);
        assert_eq!(one_trace_batch([(60, a), (60, a)], 100), 1);
        assert_eq!(one_trace_batch([(500, None), (1, None)], 100), 1, "too big goes alone");
        assert_eq!(one_trace_batch([(1, None), (1, None)], 100), 2);
        assert_eq!(one_trace_batch(Vec::<(usize, Option<&str>)>::new(), 100), 0);
    }
}
