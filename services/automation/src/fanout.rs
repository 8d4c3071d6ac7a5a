//! Follows the event log and queues one webhook delivery per (enabled subscription, matching
//! event of its workspace, committed after it was created), in the transaction that moves the
//! cursor: a crash neither skips an event nor queues it twice.
//!
//! An A2A task push folds its task's session events instead (the fold kept with it, moved in
//! the same transaction) and queues one A2A `StreamResponse` per update of the task. Its fold
//! starts from the log up to this follower's cursor, read under the follower's lock, so the
//! events before the cursor are folded once from the log and those after once here.

use crate::Automation;
use crate::error::Result;
use relay_a2a::{A2aTaskPush, TaskFold};
use relay_bus::follow::Follower;
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::events::Event;
use sqlx::types::Json;
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
    a2a: Option<(A2aTaskPush, TaskFold)>,
    /// The fold as it was kept (`None`: not kept yet), so only a changed one is written back.
    kept: Option<TaskFold>,
}

impl Subscription {
    fn wants(&self, e: &Event) -> bool {
        e.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE) == self.workspace
            && e.ts >= self.created_at
            && self.events.iter().any(|t| t == "*" || *t == e.event_type)
    }

    /// For an A2A push: the body its task's update by `e` makes, if any.
    fn a2a_body(&mut self, e: &Event) -> Option<String> {
        let (push, fold) = self.a2a.as_mut()?;
        if e.session_id.as_deref() != Some(push.task.session_id.as_str())
            || e.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE) != self.workspace
        {
            return None;
        }
        let update = fold.apply(e, &push.task)?;
        let mut responses = fold.stream_responses(&push.task, update, e.seq);
        // One post per event: a terminal CLI's answer and its completion go as the whole task.
        let body = if responses.len() == 1 {
            responses.remove(0)
        } else {
            serde_json::json!({ "task": fold.task(&push.task) })
        };
        Some(body.to_string())
    }
}

/// The deliveries a step queues, as the columns one `INSERT … UNNEST` takes.
#[derive(Default)]
struct Queue {
    ids: Vec<String>,
    hooks: Vec<String>,
    seqs: Vec<i64>,
    types: Vec<String>,
    bodies: Vec<String>,
}

impl Queue {
    fn push(&mut self, webhook_id: &str, seq: i64, event_type: &str, body: String) {
        self.ids.push(crate::new_id("msg"));
        self.hooks.push(webhook_id.to_string());
        self.seqs.push(seq);
        self.types.push(event_type.to_string());
        self.bodies.push(body);
    }
}

type SubRow = (
    String,
    String,
    Vec<String>,
    i64,
    Option<Json<A2aTaskPush>>,
    Option<Json<TaskFold>>,
);

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
    let page = FOLLOWER.next_page(&mut tx, &a.nats, a.webhooks.page).await?;
    if page.is_none() && !fresh_pushes(&mut tx).await? {
        return Ok(false);
    }
    let (events, next_seq) = match &page {
        Some(p) => (p.events.as_slice(), Some(p.next_seq)),
        None => (&[][..], None),
    };
    let rows: Vec<SubRow> = sqlx::query_as(
        "SELECT webhook_id, workspace, event_types, created_at, a2a_task, a2a_fold FROM webhook_subscriptions WHERE enabled",
    )
    .fetch_all(&mut *tx)
    .await?;
    // Where new pushes start from; read only when there is one.
    let cursor: i64 = if rows.iter().any(|r| r.4.is_some() && r.5.is_none()) {
        sqlx::query_scalar("SELECT seq FROM webhook_cursor WHERE id = 1")
            .fetch_one(&mut *tx)
            .await?
    } else {
        0
    };
    let mut subs = Vec::with_capacity(rows.len());
    let mut queue = Queue::default();
    for (webhook_id, workspace, events, created_at, a2a, fold) in rows {
        let kept = fold.as_ref().map(|f| f.0.clone());
        let a2a = match (a2a, fold) {
            (Some(push), Some(fold)) => Some((push.0, fold.0)),
            // A new push: its task up to the cursor, from the log.
            (Some(push), None) => {
                let timeout = Duration::from_secs(5);
                let fold = relay_a2a::log::fold(&a.nats, &push.0.task, Some(cursor), timeout)
                    .await
                    .map_err(crate::AutomationError::Upstream)?;
                // A task that already ended or waits for input says so once, as it is.
                if fold.started && fold.stops() && !fold.superseded {
                    let body = serde_json::json!({ "task": fold.task(&push.0.task) }).to_string();
                    queue.push(&webhook_id, fold.last_seq, relay_a2a::SENT, body);
                }
                Some((push.0, fold))
            }
            _ => None,
        };
        subs.push(Subscription {
            webhook_id,
            workspace,
            events,
            created_at,
            a2a,
            kept,
        });
    }
    for e in events {
        let mut body = None;
        for s in subs.iter_mut() {
            let this = if s.a2a.is_some() {
                match s.a2a_body(e) {
                    Some(b) => b,
                    None => continue,
                }
            } else if s.wants(e) {
                body.get_or_insert_with(|| payload(e)).clone()
            } else {
                continue;
            };
            queue.push(&s.webhook_id, e.seq, &e.event_type, this);
        }
    }
    for s in &subs {
        if let Some((_, fold)) = &s.a2a
            && s.kept.as_ref() != Some(fold)
        {
            sqlx::query("UPDATE webhook_subscriptions SET a2a_fold = $2 WHERE webhook_id = $1")
                .bind(&s.webhook_id)
                .bind(Json(fold))
                .execute(&mut *tx)
                .await?;
        }
    }
    let queued = queue.ids.len();
    if queued > 0 {
        sqlx::query(
            "INSERT INTO webhook_deliveries (delivery_id, webhook_id, event_seq, event_type, body, status, next_attempt_at, created_at)
             SELECT d, w, s, t, b, 'pending', $6, $6 FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) AS u(d, w, s, t, b)
             ON CONFLICT (webhook_id, event_seq) DO NOTHING",
        )
        .bind(&queue.ids)
        .bind(&queue.hooks)
        .bind(&queue.seqs)
        .bind(&queue.types)
        .bind(&queue.bodies)
        .bind(relay_bus::now_ms())
        .execute(&mut *tx)
        .await?;
    }
    if let Some(next_seq) = next_seq {
        FOLLOWER.advance(&mut tx, next_seq).await?;
    }
    tx.commit().await?;
    if queued > 0 {
        tracing::debug!(queued, ?next_seq, "webhook deliveries queued");
        a.post.notify_one();
    }
    Ok(events.len() as i64 >= a.webhooks.page)
}

/// With nothing new in the log: whether A2A pushes made since wait for their start (a task
/// that already ended says so once) and this replica may start them (it holds the follower's
/// lock).
async fn fresh_pushes(tx: &mut sqlx::PgConnection) -> Result<bool> {
    let fresh: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM webhook_subscriptions WHERE enabled AND a2a_task IS NOT NULL AND a2a_fold IS NULL)",
    )
    .fetch_one(&mut *tx)
    .await?;
    if !fresh {
        return Ok(false);
    }
    Ok(sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1)")
        .bind(FOLLOWER.lock_key)
        .fetch_one(&mut *tx)
        .await?)
}

/// The body posted for `e`, as Standard Webhooks suggests: `type`, `timestamp`, `data`.
fn payload(e: &Event) -> String {
    let timestamp = chrono::DateTime::from_timestamp_millis(e.ts)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    serde_json::json!({ "type": e.event_type, "timestamp": timestamp, "data": e }).to_string()
}
