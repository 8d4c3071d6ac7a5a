//! Bounded growth of the registry's tables. A session's history (messages, turns, agents,
//! stored events) lives as long as the session: a session closed for
//! `archive_closed_after_ms` with no activity since is archived, one archived for
//! `purge_archived_after_ms` is purged, as `session.archive` and `session.purge` would (a session with live children
//! waits for them). Relay messages (a thread whole, after its latest), which belong to a
//! workspace rather than a session, are deleted `keep_ms` after they were sent (coordination
//! keeps its invocations and proposals under its own `coordination.keep_ms`).

use crate::Registry;
use crate::error::RegistryError;
use relay_contracts::RequestContext;
use relay_contracts::session::SessionRef;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RetentionSettings {
    /// A session closed this long, with no activity since, is archived; 0: never.
    pub archive_closed_after_ms: u64,
    /// A session archived this long, with no activity since, is purged; 0: never.
    pub purge_archived_after_ms: u64,
    /// Relay messages are deleted this long after they were sent; 0: never.
    pub keep_ms: u64,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        const DAY: u64 = 86_400_000;
        RetentionSettings {
            archive_closed_after_ms: 30 * DAY,
            purge_archived_after_ms: 90 * DAY,
            keep_ms: 30 * DAY,
        }
    }
}

/// Sessions one pass archives or purges: a purge calls the event log and the runner.
const SESSIONS_PER_PASS: i64 = 100;

pub fn start(reg: &Registry) {
    let s = &reg.settings.retention;
    if s.keep_ms > 0 {
        relay_bus::retention::spawn(
            &reg.db,
            "registry relay messages",
            Duration::from_millis(s.keep_ms),
            vec![relay_messaging::RETENTION.into()],
        );
    }
    let windows = [s.archive_closed_after_ms, s.purge_archived_after_ms];
    if let Some(shortest) = windows.into_iter().filter(|w| *w > 0).min() {
        let every = relay_bus::retention::interval(Duration::from_millis(shortest));
        tokio::spawn(retire(reg.clone(), every));
    }
}

/// Held by the replica retiring sessions, so that the others do not queue behind its locks
/// (a purge waits on the event log and the runner) to find the same sessions done.
const RETIRE_LOCK: i64 = 0x7265_6c61_7972_6574; // "relayret"

async fn retire(reg: Registry, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        // A session-level lock on a connection of its own: it goes with the connection if
        // this replica dies mid-pass.
        let Ok(mut conn) = reg.db.acquire().await else { continue };
        let mine: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(RETIRE_LOCK)
            .fetch_one(&mut *conn)
            .await
            .unwrap_or(false);
        if !mine {
            continue;
        }
        // Never back to the pool holding the lock, however this pass ends.
        conn.close_on_drop();
        retire_once(&reg).await;
        if let Err(e) = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(RETIRE_LOCK)
            .execute(&mut *conn)
            .await
        {
            tracing::warn!(error = %e, "cannot release the retirement lock; closing its connection");
        }
    }
}

async fn retire_once(reg: &Registry) {
    let s = &reg.settings.retention;
    if s.archive_closed_after_ms > 0 {
        for id in quiet(reg, "closed", s.archive_closed_after_ms).await {
            let req = SessionRef { session_id: id.clone() };
            let done = crate::lifecycle::archive(reg.clone(), RequestContext::default(), req).await;
            log("archive", &id, done.map(|_| ()));
        }
    }
    if s.purge_archived_after_ms > 0 {
        for id in quiet(reg, "archived", s.purge_archived_after_ms).await {
            let req = SessionRef { session_id: id.clone() };
            let done = crate::lifecycle::purge(reg.clone(), RequestContext::default(), req).await;
            log("purge", &id, done.map(|_| ()));
        }
    }
}

/// Sessions in `status` for `after_ms` with no activity meanwhile, oldest first (an imported
/// one counts from its import); an archived parent whose children are not purged yet waits for
/// them (`session.purge` would refuse it).
async fn quiet(reg: &Registry, status: &str, after_ms: u64) -> Vec<String> {
    let found = sqlx::query_scalar(
        "SELECT s.session_id FROM registry_sessions s
         WHERE s.status = $1 AND s.status_since < $2 AND s.last_activity_at < $2
           AND ($1 <> 'archived' OR NOT EXISTS (
               SELECT 1 FROM registry_sessions c WHERE c.parent_session_id = s.session_id AND c.status <> 'purged'))
         ORDER BY s.status_since LIMIT $3",
    )
    .bind(status)
    .bind(relay_bus::now_ms() - after_ms as i64)
    .bind(SESSIONS_PER_PASS)
    .fetch_all(&reg.db)
    .await;
    found.unwrap_or_else(|e| {
        tracing::warn!(error = %e, status, "cannot look for quiet sessions yet; will retry");
        Vec::new()
    })
}

fn log(what: &str, session_id: &str, done: Result<(), RegistryError>) {
    match done {
        Ok(()) => tracing::info!(session_id, what, "quiet session retired"),
        // Resumed, purged or given a child meanwhile: nothing to do.
        Err(RegistryError::Conflict(_) | RegistryError::NotFound { .. }) => {}
        Err(e) => tracing::warn!(session_id, what, error = %e, "cannot retire a quiet session yet; will retry"),
    }
}
