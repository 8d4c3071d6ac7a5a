//! Follows the event log for the boundaries delivery modes wait for: an agent's status (for
//! `on-idle`) and its tool calls (for `next-tool-call`).
//!
//! The cursor lives in `delivery_cursor` and moves in the same transaction as the agent state
//! it derives (relay_bus::follow), so a crash neither skips nor re-applies an event.

use relay_bus::follow::{FollowError, Follower};
use relay_contracts::events::Event;
use relay_contracts::subjects::event as subjects;
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::Notify;

const PAGE: i64 = 1000;

/// The events that move a boundary, read from the runner's own cursor.
const FOLLOWER: Follower = Follower {
    lock_key: 0x7265_6c61_7962_6e64, // "relaybnd"
    cursor_table: "delivery_cursor",
    types: &[
        "status.changed",
        "status.idle",
        "status.active",
        "status.blocked",
        "status.waiting",
        "status.offline",
        "tool.called",
    ],
};

pub async fn run(db: PgPool, nats: async_nats::Client) {
    let wake = Arc::new(Notify::new());
    let live = vec![
        "event.committed.status.>".to_string(),
        subjects::committed_subject("tool.called"),
    ];
    tokio::spawn(relay_bus::follow::watch_live(nats.clone(), live, wake.clone()));
    relay_bus::outbox::drain_forever(&wake, "cannot follow the event log for delivery boundaries", || {
        follow(&db, &nats)
    })
    .await
}

/// Applies one page; true when it was full (more may be waiting).
async fn follow(db: &PgPool, nats: &async_nats::Client) -> Result<bool, FollowError> {
    let mut tx = db.begin().await?;
    let Some(page) = FOLLOWER.next_page(&mut tx, nats, PAGE).await? else {
        return Ok(false);
    };
    // Only the agents whose deliveries may now go are woken: waking every walker on each
    // status change made each message cost a walk of every agent at light load.
    let mut moved = std::collections::BTreeSet::new();
    for e in &page.events {
        if apply(&mut tx, e).await?
            && let Some(agent_id) = &e.agent_id
        {
            moved.insert(agent_id.clone());
        }
    }
    FOLLOWER.advance(&mut tx, page.next_seq).await?;
    if !moved.is_empty() {
        let moved: Vec<String> = moved.into_iter().collect();
        crate::store::wake_agents(&mut *tx, &moved).await?;
    }
    tx.commit().await?;
    Ok(page.events.len() as i64 >= PAGE)
}

/// The status an event reports, if it is a status event.
fn status_of(e: &Event) -> Option<String> {
    match e.event_type.as_str() {
        "status.changed" => e.payload.get("status").and_then(|s| s.as_str()).map(String::from),
        t => t.strip_prefix("status.").map(String::from),
    }
}

async fn apply(conn: &mut sqlx::PgConnection, e: &Event) -> Result<bool, sqlx::Error> {
    let Some(agent_id) = &e.agent_id else {
        return Ok(false);
    };
    if let Some(status) = status_of(e) {
        sqlx::query(
            "INSERT INTO delivery_agents (agent_id, status, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (agent_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at",
        )
        .bind(agent_id)
        .bind(&status)
        .bind(e.ts)
        .execute(&mut *conn)
        .await?;
        return Ok(true);
    }
    // tool.called: the next-tool-call deliveries sent before it may go now.
    let released = sqlx::query(
        "UPDATE deliveries SET released = true WHERE agent_id = $1 AND mode = 'next-tool-call'
           AND status IN ('pending', 'deferred') AND NOT released AND created_at <= $2",
    )
    .bind(agent_id)
    .bind(e.ts)
    .execute(&mut *conn)
    .await?;
    Ok(released.rows_affected() > 0)
}
