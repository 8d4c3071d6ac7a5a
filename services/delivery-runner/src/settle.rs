//! Receipts become delivery states and `delivery.*` events.
//!
//! One settler task per runner group-commits whatever outcomes are queued: one transaction
//! updates the deliveries and writes their events to the `delivery_events` outbox; after commit
//! the events are published live on `delivery.<kind>` and the forwarder appends them to the
//! event log. Submitters wait for the commit, so a worker never walks past an unsaved receipt.

use crate::store::{COLUMNS, DeliveryKey, DeliveryRow};
use crate::{DeliveryError, RunnerSettings};
use relay_contracts::delivery::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::{Notify, mpsc, oneshot};

/// The new state of one delivery and the event that reports it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub key: DeliveryKey,
    pub status: DeliveryStatus,
    pub available_at: i64,
    pub reason: Option<String>,
    pub retryable: Option<bool>,
    pub metadata: Option<serde_json::Value>,
    /// accepted | delivered | deferred | failed | cancelled
    pub event: &'static str,
    /// Attempts to store: a deferral does not use up the retry budget.
    pub attempts: i64,
    /// The runner whose walk produced it: stored only while that runner still holds the
    /// agent's lease (a walker whose lease expired must not overwrite its successor's work).
    pub owner: Option<String>,
}

/// Exponential backoff with jitter: base · 2^(attempt-1), capped, ±25 %.
fn backoff_ms(attempt: i64, s: &RunnerSettings) -> i64 {
    let exp = s
        .backoff_base_ms
        .saturating_mul(1 << (attempt - 1).clamp(0, 20))
        .min(s.backoff_max_ms);
    let jitter = (uuid::Uuid::new_v4().as_u128() % 1000) as f64 / 1000.0 * 0.5 - 0.25;
    (exp as f64 * (1.0 + jitter)) as i64
}

/// The earliest a deferral is tried again, so `availableAt: now` cannot spin the walker.
const MIN_DEFER_MS: i64 = 100;

/// `availableAt` as Unix ms: a number or a string of digits.
fn parse_ms(v: &serde_json::Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

impl Outcome {
    pub fn from_receipt(key: &DeliveryKey, r: Receipt, s: &RunnerSettings) -> Outcome {
        let now = relay_bus::now_ms();
        let (status, available_at, retryable, event) = match r.status {
            ReceiptStatus::Accepted => (DeliveryStatus::Accepted, now, r.retryable, "accepted"),
            ReceiptStatus::Delivered => (DeliveryStatus::Delivered, now, None, "delivered"),
            ReceiptStatus::Deferred => {
                let at = r.available_at.as_ref().and_then(parse_ms).unwrap_or_else(|| {
                    tracing::warn!(delivery_id = %key.delivery_id, available_at = ?r.available_at, "deferral without a Unix-ms availableAt; retrying after the base backoff");
                    now + s.backoff_base_ms
                });
                (DeliveryStatus::Deferred, at.max(now + MIN_DEFER_MS), None, "deferred")
            }
            ReceiptStatus::Failed if r.retryable == Some(true) && key.attempts < s.max_attempts => (
                DeliveryStatus::Pending,
                now + backoff_ms(key.attempts, s),
                Some(true),
                "failed",
            ),
            ReceiptStatus::Failed => (DeliveryStatus::Failed, now, Some(false), "failed"),
        };
        let reason = match (event, r.reason) {
            ("failed", None) => Some("the harness gave no reason".into()),
            (_, reason) => reason,
        };
        Outcome {
            key: key.clone(),
            status,
            available_at,
            reason,
            retryable,
            metadata: r.metadata,
            event,
            attempts: if event == "deferred" {
                key.attempts - 1
            } else {
                key.attempts
            },
            owner: None,
        }
    }

    /// A final failure without asking the harness (capability mismatch, agent gone).
    pub fn refused(key: &DeliveryKey, reason: String) -> Outcome {
        Outcome {
            key: key.clone(),
            status: DeliveryStatus::Failed,
            available_at: relay_bus::now_ms(),
            reason: Some(reason),
            retryable: Some(false),
            metadata: None,
            event: "failed",
            attempts: key.attempts,
            owner: None,
        }
    }

    /// Later deliveries to the agent wait behind this one (per-agent order).
    pub fn holds_back(&self) -> bool {
        matches!(self.status, DeliveryStatus::Pending | DeliveryStatus::Deferred)
    }

    fn to_event(&self) -> DeliveryEvent {
        DeliveryEvent {
            event_type: format!("delivery.{}", self.event),
            delivery_id: self.key.delivery_id.clone(),
            message_id: self.key.message_id.clone(),
            session_id: self.key.session_id.clone(),
            agent_id: self.key.agent_id.clone(),
            mode: self.key.mode,
            attempt: self.key.attempts,
            available_at: (self.event == "deferred" || self.status == DeliveryStatus::Pending)
                .then_some(self.available_at),
            reason: self.reason.clone(),
            retryable: self.retryable,
        }
    }
}

/// A job's outcomes, and where to answer with the deliveries they changed (as stored).
type Job = (Vec<Outcome>, oneshot::Sender<Result<Vec<Delivery>, String>>);

/// Handle to the runner's settler task.
#[derive(Clone)]
pub struct Settler {
    jobs: mpsc::UnboundedSender<Job>,
}

/// Outcomes committed per transaction at most.
const MAX_GROUP: usize = 2000;

impl Settler {
    pub fn start(db: sqlx::PgPool, nats: async_nats::Client, forward_wake: Arc<Notify>) -> Settler {
        let (jobs, rx) = mpsc::unbounded_channel();
        tokio::spawn(group_commit(db, nats, forward_wake, rx));
        Settler { jobs }
    }

    /// Queues outcomes; the receiver answers once they are committed.
    pub fn submit(self, outcomes: Vec<Outcome>) -> oneshot::Receiver<Result<Vec<Delivery>, String>> {
        let (tx, rx) = oneshot::channel();
        // The task lives as long as the runner; a closed channel shows up as a dropped sender.
        let _ = self.jobs.send((outcomes, tx));
        rx
    }

    /// Stores the outcomes and publishes their events; returns, once committed, the deliveries
    /// they changed (one cancelled or settled meanwhile is not among them).
    pub async fn settle(&self, outcomes: Vec<Outcome>) -> Result<Vec<Delivery>, DeliveryError> {
        wait(self.clone().submit(outcomes)).await
    }
}

/// Waits for a submitted group's commit.
pub async fn wait(rx: oneshot::Receiver<Result<Vec<Delivery>, String>>) -> Result<Vec<Delivery>, DeliveryError> {
    let failed = match rx.await {
        Ok(Ok(changed)) => return Ok(changed),
        Ok(Err(e)) => format!("receipts not stored: {e}"),
        Err(_) => "receipts not stored: the settler stopped".into(),
    };
    Err(DeliveryError::Upstream(relay_contracts::WireError::new(
        relay_contracts::ErrorCode::Unavailable,
        failed,
    )))
}

async fn group_commit(
    db: sqlx::PgPool,
    nats: async_nats::Client,
    forward_wake: Arc<Notify>,
    mut rx: mpsc::UnboundedReceiver<Job>,
) {
    while let Some(first) = rx.recv().await {
        let mut group = vec![first];
        let mut n = group[0].0.len();
        while n < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => {
                    n += job.0.len();
                    group.push(job);
                }
                Err(_) => break,
            }
        }
        let outcomes: Vec<&Outcome> = group.iter().flat_map(|(o, _)| o).collect();
        let result = commit(&db, &outcomes).await;
        tracing::debug!(outcomes = outcomes.len(), ok = result.is_ok(), "receipts committed");
        match result {
            Ok((events, changed)) => {
                publish(&nats, &forward_wake, &events).await;
                let mut changed: HashMap<String, Delivery> =
                    changed.into_iter().map(|d| (d.delivery_id.clone(), d)).collect();
                for (job, done) in group {
                    let mine = job.iter().filter_map(|o| changed.remove(&o.key.delivery_id)).collect();
                    let _ = done.send(Ok(mine));
                }
            }
            // One job's bad outcome (or a deadlock) must not fail the others: each alone.
            Err(e) => {
                tracing::warn!(error = %e, outcomes = outcomes.len(), "cannot store receipts as a group; storing each job alone");
                for (job, done) in group {
                    let alone: Vec<&Outcome> = job.iter().collect();
                    let result = commit(&db, &alone).await;
                    if let Ok((events, _)) = &result {
                        publish(&nats, &forward_wake, events).await;
                    }
                    let _ = done.send(result.map(|(_, changed)| changed).map_err(|e| e.to_string()));
                }
            }
        }
    }
}

/// After commit: the forwarder appends the stored events to the log, and each goes live on
/// its `delivery.<kind>` subject.
/// Each is published in the trace of the request that sent its message.
pub(crate) async fn publish(nats: &async_nats::Client, forward_wake: &Notify, events: &[Traced]) {
    use tracing::Instrument;
    if !events.is_empty() {
        forward_wake.notify_one();
    }
    for (e, traceparent) in events {
        let published = relay_bus::client::publish(nats, e.event_type.clone(), e);
        let published = match traceparent {
            Some(tp) => {
                published
                    .instrument(relay_bus::trace::continuing("delivery event", Some(tp)))
                    .await
            }
            None => published.await,
        };
        if let Err(err) = published {
            tracing::warn!(delivery_id = %e.delivery_id, error = %err, "delivery event stored but not published");
        }
    }
}

/// A delivery event with the trace context of its message.
pub(crate) type Traced = (DeliveryEvent, Option<String>);

/// What a group changed: the events, and the deliveries as stored.
type Changed = (Vec<Traced>, Vec<Delivery>);

/// Stores the group atomically; returns what it changed. A delivery cancelled or settled
/// meanwhile is left alone.
async fn commit(db: &sqlx::PgPool, outcomes: &[&Outcome]) -> Result<Changed, sqlx::Error> {
    if outcomes.is_empty() {
        return Ok(Default::default());
    }
    // A delivery may appear twice (accepted by the walker, then reported delivered): split into
    // rounds so each statement sees every id once, in order.
    let mut rounds = Vec::new();
    let mut rest = outcomes;
    while !rest.is_empty() {
        let mut seen = HashSet::new();
        let cut = rest
            .iter()
            .position(|o| !seen.insert(o.key.delivery_id.as_str()))
            .unwrap_or(rest.len());
        let (round, tail) = rest.split_at(cut);
        rounds.push(round);
        rest = tail;
    }
    // The common case is one round: one statement, no explicit transaction.
    if let [round] = rounds[..] {
        return apply(db, round).await;
    }
    let mut tx = db.begin().await?;
    let (mut events, mut changed) = (Vec::new(), Vec::new());
    for round in rounds {
        let (e, c) = apply(&mut *tx, round).await?;
        events.extend(e);
        changed.extend(c);
    }
    tx.commit().await?;
    Ok((events, changed))
}

/// One statement: the state changes and, for each delivery actually changed, its event in the
/// outbox.
async fn apply<'e, E: sqlx::PgExecutor<'e>>(db: E, round: &[&Outcome]) -> Result<Changed, sqlx::Error> {
    let now = relay_bus::now_ms();
    let events: Vec<DeliveryEvent> = round.iter().map(|o| o.to_event()).collect();
    let col = |f: fn(&Outcome) -> Option<String>| round.iter().map(|o| f(o)).collect::<Vec<_>>();
    let ids = col(|o| Some(o.key.delivery_id.clone()));
    let statuses = col(|o| Some(o.status.as_str().to_string()));
    // Postgres stores no NUL in text or jsonb; a harness's reason must not fail the group.
    let reasons = col(|o| o.reason.as_ref().map(|r| r.replace('\0', "")));
    let metadata = col(|o| o.metadata.as_ref().map(|m| strip_nul(m).to_string()));
    let sessions = col(|o| Some(o.key.session_id.clone()));
    let owners = col(|o| o.owner.clone());
    let agents = col(|o| Some(o.key.agent_id.clone()));
    let at: Vec<i64> = round.iter().map(|o| o.available_at).collect();
    let retryable: Vec<Option<bool>> = round.iter().map(|o| o.retryable).collect();
    let attempts: Vec<i32> = round.iter().map(|o| o.attempts as i32).collect();
    let event_ids: Vec<String> = round.iter().map(|_| uuid::Uuid::now_v7().to_string()).collect();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let payloads: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).expect("delivery event encodes"))
        .collect();
    let changed: Vec<DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "WITH u AS (
             SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bool[], $6::text[],
                                  $7::int[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
                 AS u(id, status, available_at, reason, retryable, metadata, attempts, event_id, session_id, type, payload,
                      owner, agent_id)
             -- A walker's outcomes count only while it still holds the agent's lease.
             WHERE u.owner IS NULL OR EXISTS (SELECT 1 FROM delivery_agents g
                                              WHERE g.agent_id = u.agent_id AND g.owner = u.owner)),
         changed AS (
             UPDATE deliveries d SET status = u.status, available_at = u.available_at, reason = u.reason,
                 retryable = u.retryable, metadata = u.metadata::jsonb, attempts = greatest(d.attempts, u.attempts),
                 updated_at = $8
             FROM u WHERE d.delivery_id = u.id AND d.status IN ('pending', 'deferred', 'accepted')
             RETURNING d.*),
         logged AS (
             INSERT INTO delivery_events (event_id, session_id, type, ts, payload, traceparent, workspace)
             SELECT u.event_id, u.session_id, u.type, $8, u.payload::jsonb, c.traceparent, c.workspace
             FROM u JOIN changed c ON c.delivery_id = u.id)
         SELECT {COLUMNS} FROM changed"
    )))
    .bind(&ids)
    .bind(&statuses)
    .bind(&at)
    .bind(&reasons)
    .bind(&retryable)
    .bind(&metadata)
    .bind(&attempts)
    .bind(now)
    .bind(&event_ids)
    .bind(&sessions)
    .bind(&types)
    .bind(&payloads)
    .bind(&owners)
    .bind(&agents)
    .fetch_all(db)
    .await?;
    let traces: HashMap<String, Option<String>> = changed
        .iter()
        .map(|d| (d.delivery_id.clone(), d.traceparent.clone()))
        .collect();
    let changed: Vec<Delivery> = changed.into_iter().map(Delivery::from).collect();
    let events = events
        .into_iter()
        .filter_map(|e| {
            let tp = traces.get(e.delivery_id.as_str())?.clone();
            Some((e, tp))
        })
        .collect();
    Ok((events, changed))
}

/// The value without NUL characters in any string or key.
fn strip_nul(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(s.replace('\0', "")),
        Value::Array(a) => Value::Array(a.iter().map(strip_nul).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.replace('\0', ""), strip_nul(v))).collect()),
        other => other.clone(),
    }
}
