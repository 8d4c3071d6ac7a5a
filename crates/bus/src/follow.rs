//! Following the event log from a service's own cursor.
//!
//! A follower keeps its position in a one-row table (`<table>(id = 1, seq)`) and moves it in
//! the transaction that applies the page, so a crash neither skips nor re-applies an event.
//! One replica follows at a time (an advisory lock per follower); live `event.committed.*`
//! messages only make it look sooner.

use futures::StreamExt;
use relay_contracts::WireError;
use relay_contracts::events::{SinceRequest, SinceResponse};
use relay_contracts::rpc::EventSince;
use sqlx::PgConnection;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const TIMEOUT: Duration = Duration::from_secs(5);

/// One follower: its lock, its cursor table and the event types it reads (none: every type).
#[derive(Debug, Clone, Copy)]
pub struct Follower {
    pub lock_key: i64,
    pub cursor_table: &'static str,
    pub types: &'static [&'static str],
}

#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("event log: {0}")]
    Log(#[from] WireError),
}

impl Follower {
    /// In `tx`: takes this follower's turn and reads the next page after its cursor. `None`
    /// when another replica is following or nothing new has been committed.
    pub async fn next_page(
        &self,
        tx: &mut PgConnection,
        nats: &async_nats::Client,
        limit: i64,
    ) -> Result<Option<SinceResponse>, FollowError> {
        let mine: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
            .bind(self.lock_key)
            .fetch_one(&mut *tx)
            .await?;
        if !mine {
            return Ok(None);
        }
        let cursor: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT seq FROM {} WHERE id = 1 FOR UPDATE",
            self.cursor_table
        )))
        .fetch_one(&mut *tx)
        .await?;
        let req = SinceRequest {
            seq: cursor,
            types: (!self.types.is_empty()).then(|| self.types.iter().map(std::string::ToString::to_string).collect()),
            agents: None,
            session_ids: None,
            limit: Some(limit),
        };
        // Polling is not traced: it would be a trace every time it looks.
        let page: SinceResponse =
            crate::trace::untraced(crate::client::call::<EventSince>(nats, &req, TIMEOUT)).await?;
        Ok((page.next_seq != cursor).then_some(page))
    }

    /// Moves the cursor, in the transaction that applied the page.
    pub async fn advance(&self, tx: &mut PgConnection, next_seq: i64) -> Result<(), sqlx::Error> {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {} SET seq = $1 WHERE id = 1",
            self.cursor_table
        )))
        .bind(next_seq)
        .execute(tx)
        .await?;
        Ok(())
    }
}

/// Pokes `wake` for every live message on `subjects` (e.g. `event.committed.tool.called`);
/// without them the follower still polls.
pub async fn watch_live(nats: async_nats::Client, subjects: Vec<String>, wake: Arc<Notify>) {
    let subscribe = async {
        let mut all = Vec::new();
        for s in &subjects {
            all.push(nats.subscribe(s.clone()).await?);
        }
        Ok::<_, async_nats::SubscribeError>(futures::stream::select_all(all))
    };
    match subscribe.await {
        Ok(mut live) => {
            while live.next().await.is_some() {
                wake.notify_one();
            }
        }
        Err(e) => tracing::warn!(error = %e, ?subjects, "no live events; polling the log"),
    }
}
