//! Bounded growth of the registry's tables. A session's history (messages, turns, agents,
//! stored events) lives as long as the session: a closed session quiet for
//! `archive_closed_after_ms` is archived, an archived one quiet for `purge_archived_after_ms`
//! is purged, as `session.archive` and `session.purge` would (a session with live children
//! waits for them). Relay messages, finished action invocations and decided proposals, which
//! belong to a workspace rather than a session, are deleted `keep_ms` after they ended.

use crate::Registry;
use crate::error::RegistryError;
use relay_contracts::RequestContext;
use relay_contracts::session::SessionRef;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RetentionSettings {
    /// A closed session with no activity for this long is archived; 0: never.
    pub archive_closed_after_ms: u64,
    /// An archived session with no activity for this long is purged; 0: never.
    pub purge_archived_after_ms: u64,
    /// Relay messages, finished invocations and decided proposals are deleted this long after
    /// they were sent or ended; 0: never.
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
            "registry relay messages, invocations and proposals",
            Duration::from_millis(s.keep_ms),
            vec![
                "DELETE FROM registry_relay_messages WHERE seq IN (
                   SELECT seq FROM registry_relay_messages WHERE created_at < $1 ORDER BY created_at LIMIT $2)"
                    .into(),
                "DELETE FROM registry_invocations WHERE (workspace, caller, invocation_id) IN (
                   SELECT workspace, caller, invocation_id FROM registry_invocations
                   WHERE doc->>'completedAt' IS NOT NULL AND (doc->>'completedAt')::bigint < $1
                   ORDER BY (doc->>'completedAt')::bigint LIMIT $2)"
                    .into(),
                "DELETE FROM registry_proposals WHERE proposal_id IN (
                   SELECT proposal_id FROM registry_proposals WHERE status <> 'open' AND deadline < $1
                   ORDER BY deadline LIMIT $2)"
                    .into(),
            ],
        );
    }
    let windows = [s.archive_closed_after_ms, s.purge_archived_after_ms];
    if let Some(shortest) = windows.into_iter().filter(|w| *w > 0).min() {
        let every = (Duration::from_millis(shortest) / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
        tokio::spawn(retire(reg.clone(), every));
    }
}

async fn retire(reg: Registry, every: Duration) {
    let s = reg.settings.retention.clone();
    loop {
        tokio::time::sleep(every).await;
        if s.archive_closed_after_ms > 0 {
            for id in quiet(&reg, "closed", s.archive_closed_after_ms).await {
                let done = crate::lifecycle::archive(
                    reg.clone(),
                    RequestContext::default(),
                    SessionRef { session_id: id.clone() },
                )
                .await;
                log("archive", &id, done.map(|_| ()));
            }
        }
        if s.purge_archived_after_ms > 0 {
            for id in quiet(&reg, "archived", s.purge_archived_after_ms).await {
                let done = crate::lifecycle::purge(
                    reg.clone(),
                    RequestContext::default(),
                    SessionRef { session_id: id.clone() },
                )
                .await;
                log("purge", &id, done.map(|_| ()));
            }
        }
    }
}

/// Sessions in `status` with no activity for `after_ms`, oldest first; an archived parent
/// whose children are not purged yet waits for them (`session.purge` would refuse it).
async fn quiet(reg: &Registry, status: &str, after_ms: u64) -> Vec<String> {
    let found = sqlx::query_scalar(
        "SELECT s.session_id FROM registry_sessions s
         WHERE s.status = $1 AND s.last_activity_at < $2
           AND ($1 <> 'archived' OR NOT EXISTS (
               SELECT 1 FROM registry_sessions c WHERE c.parent_session_id = s.session_id AND c.status <> 'purged'))
         ORDER BY s.last_activity_at LIMIT $3",
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
