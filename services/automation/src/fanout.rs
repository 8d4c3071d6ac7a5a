//! Follows the event log and queues one webhook delivery per (enabled subscription, matching
//! event of its workspace, committed after it was created), in the transaction that moves the
//! cursor: a crash neither skips an event nor queues it twice.

use crate::Automation;
use crate::error::Result;
use relay_bus::follow::Follower;
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::events::Event;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

const FOLLOWER: Follower = Follower {
    lock_key: 0x7265_6c61_7977_6866, // "relaywhf"
    cursor_table: "webhook_cursor",
    types: &[],
};

struct Subscription {
    webhook_id: String,
    workspace: String,
    events: Vec<String>,
    created_at: i64,
}

impl Subscription {
    fn wants(&self, e: &Event) -> bool {
        e.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE) == self.workspace
            && e.ts >= self.created_at
            && self.events.iter().any(|t| t == "*" || *t == e.event_type)
    }
}

pub async fn run(a: Automation) {
    let wake = Arc::new(Notify::new());
    tokio::spawn(relay_bus::follow::watch_live(
        a.nats.clone(),
        vec!["event.committed.>".into()],
        wake.clone(),
    ));
    let poll = Duration::from_millis(a.webhooks.poll_interval_ms);
    relay_bus::outbox::repeat(
        &wake,
        "cannot read the event log for webhooks yet",
        || step(&a),
        || async move { poll },
    )
    .await
}

/// Queues the next page; whether it was full (more may be waiting).
async fn step(a: &Automation) -> Result<bool> {
    let mut tx = a.db.begin().await?;
    let Some(page) = FOLLOWER.next_page(&mut tx, &a.nats, a.webhooks.page).await? else {
        return Ok(false);
    };
    let subs: Vec<(String, String, Vec<String>, i64)> = sqlx::query_as(
        "SELECT webhook_id, workspace, event_types, created_at FROM webhook_subscriptions WHERE enabled",
    )
    .fetch_all(&mut *tx)
    .await?;
    let subs: Vec<Subscription> = subs
        .into_iter()
        .map(|(webhook_id, workspace, events, created_at)| Subscription {
            webhook_id,
            workspace,
            events,
            created_at,
        })
        .collect();
    let (mut ids, mut hooks, mut seqs, mut types, mut bodies) = (vec![], vec![], vec![], vec![], vec![]);
    for e in &page.events {
        let mut body = None;
        for s in subs.iter().filter(|s| s.wants(e)) {
            let body = body.get_or_insert_with(|| payload(e)).clone();
            ids.push(crate::new_id("msg"));
            hooks.push(s.webhook_id.clone());
            seqs.push(e.seq);
            types.push(e.event_type.clone());
            bodies.push(body);
        }
    }
    let queued = ids.len();
    if queued > 0 {
        sqlx::query(
            "INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_seq, event_type, body, status, next_attempt_at, created_at)
             SELECT d, w, s, t, b, 'pending', $6, $6 FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(d, w, s, t, b)
             ON CONFLICT (webhook_id, event_seq) DO NOTHING",
        )
        .bind(&ids)
        .bind(&hooks)
        .bind(&seqs)
        .bind(&types)
        .bind(&bodies)
        .bind(relay_bus::now_ms())
        .execute(&mut *tx)
        .await?;
    }
    FOLLOWER.advance(&mut tx, page.next_seq).await?;
    tx.commit().await?;
    if queued > 0 {
        tracing::debug!(queued, next_seq = page.next_seq, "webhook deliveries queued");
        a.post.notify_one();
    }
    Ok(page.events.len() as i64 >= a.webhooks.page)
}

/// The body posted for `e`, as Standard Webhooks suggests: `type`, `timestamp`, `data`.
fn payload(e: &Event) -> String {
    let timestamp = chrono::DateTime::from_timestamp_millis(e.ts)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    serde_json::json!({ "type": e.event_type, "timestamp": timestamp, "data": e }).to_string()
}
