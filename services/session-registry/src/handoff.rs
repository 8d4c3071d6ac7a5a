//! The hand-off outbox: what the delivery runner must know of the registry's changes (a sent
//! message and its deliveries, an agent's new status or capabilities), stored in the change's
//! own transaction and handed over on `delivery.handoff` in commit order.
//!
//! A change that stored entries hands them over itself right after it commits, so the runner
//! normally has them before the caller hears back; whatever that could not hand over (the
//! runner down) is handed over by the background relay once it can. One relay at a time (an
//! advisory lock) keeps the commit order; the runner applies an entry twice harmlessly.

use crate::error::Result;
use relay_contracts::delivery::{HandoffEntry, HandoffItem, HandoffRequest};
use relay_contracts::rpc::DeliveryHandoff;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tracing::Instrument;

const BATCH: i64 = 200;
/// Bytes of entries per hand-over: well under the NATS max_payload (1 MiB by default). A
/// bigger entry goes alone.
const BATCH_BYTES: usize = 512 * 1024;
/// The largest entry that fits one NATS message; a message bigger than this is refused at send.
pub const MAX_ENTRY_BYTES: usize = 900 * 1024;
/// Advisory lock key: one relay at a time, across replicas.
const LOCK_KEY: i64 = 0x7265_6c61_7968_616e; // "relayhan"
const TIMEOUT: Duration = Duration::from_secs(5);
const INLINE_WAIT: Duration = Duration::from_millis(300);

/// Stores `item` for hand-over in the caller's transaction; `invalid_request` when it could
/// never be handed over (bigger than one NATS message).
pub async fn store(conn: &mut PgConnection, session_id: &str, item: &HandoffItem) -> Result<()> {
    let json = serde_json::to_string(item).map_err(|e| crate::RegistryError::Invalid(e.to_string()))?;
    if json.len() > MAX_ENTRY_BYTES {
        return Err(crate::RegistryError::Invalid(format!(
            "the message is too large to deliver: {} bytes stored with its deliveries, at most {MAX_ENTRY_BYTES}",
            json.len()
        )));
    }
    sqlx::query("INSERT INTO registry_handoffs (session_id, item, traceparent) VALUES ($1, $2::jsonb, $3)")
        .bind(session_id)
        .bind(json)
        .bind(relay_bus::trace::current_traceparent())
        .execute(conn)
        .await?;
    Ok(())
}

/// The last hand-off seq handed out so far: entries of a session up to it are what a purge
/// makes stale.
pub async fn watermark(conn: &mut PgConnection) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('registry_handoffs', 'seq')::regclass), 0)",
    )
    .fetch_one(conn)
    .await?)
}

/// Drops what a purged session had not handed over yet, up to `through_seq`. An entry a relay
/// is sending meanwhile is ignored by the runner, which remembers the purge (`delivery.purge`).
pub async fn forget_session(conn: &mut PgConnection, session_id: &str, through_seq: i64) -> Result<()> {
    sqlx::query("DELETE FROM registry_handoffs WHERE session_id = $1 AND seq <= $2")
        .bind(session_id)
        .bind(through_seq)
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(Clone)]
pub struct Relay {
    db: PgPool,
    nats: async_nats::Client,
    wake: Arc<Notify>,
    enabled: bool,
    /// One hand-over at a time in this process: concurrent commits queue here, not on the
    /// database lock while holding a pooled connection each.
    busy: Arc<tokio::sync::Mutex<()>>,
    /// The last hand-over failed: commits leave it to the background relay rather than each
    /// waiting out the timeout.
    failing: Arc<AtomicBool>,
    /// Hand-overs begun so far: a commit whose entries a later-begun hand-over already took
    /// (it read everything committed) has nothing left to do.
    begun: Arc<AtomicU64>,
}

impl Relay {
    /// Starts the background relay when `enabled`.
    pub fn start(db: PgPool, nats: async_nats::Client, enabled: bool) -> Relay {
        let relay = Relay {
            db,
            nats,
            wake: Arc::new(Notify::new()),
            enabled,
            busy: Arc::default(),
            failing: Arc::new(AtomicBool::new(false)),
            begun: Arc::default(),
        };
        if enabled {
            tokio::spawn(relay.clone().run());
        }
        relay
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Hands over everything pending, oldest first (what other commits stored too, so the
    /// order holds), waiting at most `INLINE_WAIT` for it: normally the runner has the
    /// deliveries before the caller hears back, and a runner that hangs (killed, and NATS has
    /// not noticed yet) holds a send up for no longer than that. On failure the background
    /// relay takes over.
    pub async fn hand_over_now(&self) {
        if !self.enabled {
            return;
        }
        let relay = self.clone();
        let committed = self.begun.load(Ordering::Acquire);
        let task = tokio::spawn(
            async move {
                let _one = relay.busy.lock().await;
                if relay.begun.load(Ordering::Acquire) > committed && !relay.failing.load(Ordering::Relaxed) {
                    return;
                }
                if relay.failing.load(Ordering::Relaxed) {
                    relay.wake.notify_one();
                    return;
                }
                if let Err(e) = relay.hand_over_pending().await {
                    tracing::warn!(error = %e, "delivery hand-off deferred to the background relay");
                    relay.wake.notify_one();
                }
            }
            .in_current_span(),
        );
        let _ = tokio::time::timeout(INLINE_WAIT, task).await;
    }

    /// Hands over everything committed so far, waiting as long as that takes (up to the
    /// hand-off timeout per batch): afterwards the runner knows every delivery committed before
    /// the call, so a cancel that found none of them can be asked again.
    pub async fn flush(&self) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let _one = self.busy.lock().await;
        self.hand_over_pending().await
    }

    async fn run(self) {
        let what = "cannot hand deliveries to the delivery runner yet";
        relay_bus::outbox::drain_forever(&self.wake, what, || async {
            let _one = self.busy.lock().await;
            self.noted(self.hand_over_batch().await)
        })
        .await
    }

    /// Everything pending; the caller holds `busy`.
    async fn hand_over_pending(&self) -> Result<()> {
        self.begun.fetch_add(1, Ordering::AcqRel);
        while self.noted(self.hand_over_batch().await)? {}
        Ok(())
    }

    /// Remembers whether the last hand-over failed.
    fn noted<T>(&self, result: Result<T>) -> Result<T> {
        self.failing.store(result.is_err(), Ordering::Relaxed);
        result
    }

    /// One batch under the relay lock: the oldest entries, at most `BATCH_BYTES`, whatever send
    /// stored them (each message carries its own trace to the runner); returns whether more are
    /// pending. Sends committed at once go over in one request, not one round trip each behind
    /// the lock.
    async fn hand_over_batch(&self) -> Result<bool> {
        let mut tx = self.db.begin().await?;
        // Losing the deletion below in a crash only re-sends entries the runner ignores; not
        // waiting for its flush lets the next hand-over start sooner.
        sqlx::query("SELECT pg_advisory_xact_lock($1), set_config('synchronous_commit', 'off', true)")
            .bind(LOCK_KEY)
            .execute(&mut *tx)
            .await?;
        let mut rows: Vec<(i64, Json<HandoffItem>, Option<String>, i64)> = sqlx::query_as(
            "SELECT seq, item, traceparent, octet_length(item::text)::bigint FROM registry_handoffs ORDER BY seq LIMIT $1",
        )
        .bind(BATCH)
        .fetch_all(&mut *tx)
        .await?;
        let Some(first) = rows.first() else {
            return Ok(false);
        };
        let trace = first.2.clone();
        let take = relay_bus::outbox::one_trace_batch(rows.iter().map(|r| (r.3 as usize, None)), BATCH_BYTES);
        let more = rows.len() > take || rows.len() as i64 == BATCH;
        rows.truncate(take);
        let span = relay_bus::trace::continuing("hand over deliveries", trace.as_deref());
        let seqs: Vec<i64> = rows.iter().map(|r| r.0).collect();
        let req = HandoffRequest {
            entries: rows
                .into_iter()
                .map(|(seq, Json(item), _, _)| HandoffEntry { seq, item })
                .collect(),
        };
        relay_bus::client::call::<DeliveryHandoff>(&self.nats, &req, TIMEOUT)
            .instrument(span)
            .await
            .map_err(crate::RegistryError::Upstream)?;
        sqlx::query("DELETE FROM registry_handoffs WHERE seq = ANY($1)")
            .bind(&seqs)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(more)
    }
}
