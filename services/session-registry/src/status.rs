//! The status each agent last reported: seed 000's `status.changed` (and `status.<state>`)
//! events, followed from the event log on the registry's own cursor (the delivery runner keeps
//! its own copy for delivery boundaries; the registry never reads the runner's tables). Agent
//! listings show it (`reportedStatus`) and filter by it (`agent.list {status: "waiting"}`).

use relay_bus::follow::{FollowError, Follower};
use relay_contracts::events::Event;
use relay_contracts::session::AgentStatus;
use serde_json::json;
use sqlx::PgPool;
use std::sync::Arc;
use tokio::sync::Notify;

const FOLLOWER: Follower = Follower {
    lock_key: 0x7265_6c61_7973_7473, // "relaysts"
    cursor_table: "registry_status_cursor",
    types: &[
        "status.changed",
        "status.idle",
        "status.active",
        "status.blocked",
        "status.waiting",
        "status.offline",
    ],
};
const PAGE: i64 = 500;

/// Follows the log for as long as the registry runs (one replica at a time).
pub(crate) fn start(db: PgPool, nats: async_nats::Client) {
    let wake = Arc::new(Notify::new());
    tokio::spawn(relay_bus::follow::watch_live(
        nats.clone(),
        vec!["event.committed.status.>".to_string()],
        wake.clone(),
    ));
    tokio::spawn(async move {
        let what = "cannot follow the agents' reported status in the event log yet";
        relay_bus::outbox::drain_forever(&wake, what, || follow(&db, &nats)).await
    });
}

/// Applies one page; true when it was full (more may be waiting).
async fn follow(db: &PgPool, nats: &async_nats::Client) -> Result<bool, FollowError> {
    let mut tx = db.begin().await?;
    let Some(page) = FOLLOWER.next_page(&mut tx, nats, PAGE).await? else {
        return Ok(false);
    };
    for e in &page.events {
        apply(&mut tx, e).await?;
    }
    FOLLOWER.advance(&mut tx, page.next_seq).await?;
    tx.commit().await?;
    Ok(page.events.len() as i64 >= PAGE)
}

/// The status an event reports, if it names one.
fn status_of(e: &Event) -> Option<&str> {
    match e.event_type.as_str() {
        "status.changed" => e.payload.get("status").and_then(|s| s.as_str()),
        t => t.strip_prefix("status."),
    }
}

async fn apply(conn: &mut sqlx::PgConnection, e: &Event) -> Result<(), sqlx::Error> {
    let status = status_of(e).and_then(|s| serde_json::from_value::<AgentStatus>(json!(s)).ok());
    let (Some(agent_id), Some(status)) = (&e.agent_id, status) else {
        return Ok(());
    };
    let reason = e.payload.get("reason").and_then(|r| r.as_str());
    // Only the registry's agents (an event may name any id), and never an older report over a
    // newer one.
    sqlx::query(
        "INSERT INTO registry_agent_status (agent_id, status, reason, since, seq)
         SELECT agent_id, $2, $3, $4, $5 FROM registry_agents WHERE agent_id = $1
         ON CONFLICT (agent_id) DO UPDATE
           SET status = EXCLUDED.status, reason = EXCLUDED.reason, since = EXCLUDED.since, seq = EXCLUDED.seq
           WHERE registry_agent_status.seq < EXCLUDED.seq",
    )
    .bind(agent_id)
    .bind(status.as_str())
    .bind(reason)
    .bind(e.ts)
    .bind(e.seq)
    .execute(conn)
    .await?;
    Ok(())
}
