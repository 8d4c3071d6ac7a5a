//! The delivery loop.
//!
//! Work is claimed per agent: a runner leases agents that have a delivery ready (`FOR UPDATE
//! SKIP LOCKED`, so replicas share the agents), then walks each leased agent's deliveries in
//! order. One walker per agent keeps per-agent order across replicas; a runner killed
//! mid-walk leaves a lease that the others clear once its liveness lock is gone (liveness.rs;
//! else it expires), another runner takes the agent over and re-sends what had no stored receipt, and the harness recognises the delivery id (seed 001: the context id
//! is the idempotency key).
//!
//! Which waiting deliveries may go (seed 001 modes):
//! - `immediate`: at once;
//! - `on-idle`: when the agent's last status (boundary.rs) is a configured safe state;
//! - `next-tool-call`: after the agent's next `tool.called` (boundary.rs releases it);
//! - `next-message`: just ahead of the agent's next message of another mode;
//! - `manual`: after `delivery.flush`;
//! - boundary modes go at once to a harness that declared `delivery.queue`: it accepts them
//!   and reports delivery at the boundary itself (`delivery.report`);
//! - nothing while the agent is paused (`agent.pause`).
//!
//! A delivery that may go but is not due yet (deferred, or a retry in backoff) holds back the
//! agent's later ones.

use crate::Runner;
use crate::settle::Outcome;
use crate::store::DeliveryKey;
use futures::FutureExt;
use relay_bus::db::TextEnum;
use relay_contracts::capabilities::{AgentSessionCapabilities, DeliveryMode};
use relay_contracts::delivery::*;
use relay_contracts::rpc;
use relay_contracts::session::{Agent, AgentRecordStatus, Message};
use sqlx::types::Json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};
use tracing::Instrument;

/// SQL: may waiting delivery `{d}` go now, apart from its time? `a` is the agent's
/// `delivery_agents` row (LEFT JOINed), `$3` the array of safe states.
fn may_go(d: &str) -> String {
    // An agent that is gone (released, failed, or not live as the registry handed it over)
    // gets everything at once: the capability check then fails each delivery explicitly
    // instead of holding it. So does a delivery its workspace's policy refused or whose
    // deadline passed, whatever its mode: it goes to fail with the reason. An agent whose
    // host stopped heartbeating (`offlineSince`) gets nothing else until it is back.
    let own = |x: &str| {
        format!(
            "({x}.refusal IS NOT NULL
             OR {x}.deadline < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
             OR a.status IN ('released', 'failed')
             OR a.doc IS NULL OR a.doc->>'status' IN ('disposed', 'dead')
             OR (a.doc->>'offlineSince' IS NULL AND ({x}.mode = 'immediate' OR {x}.released
                 OR ({x}.mode = 'on-idle' AND a.status = ANY($3))
                 OR ({x}.mode IN ('next-message', 'next-tool-call')
                     AND a.doc #>> '{{capabilities,delivery,queue}}' = 'true'))))"
        )
    };
    // next-message deliveries ride just ahead of the agent's next message of another mode.
    format!(
        "({} OR ({d}.mode = 'next-message' AND EXISTS (
             SELECT 1 FROM deliveries l WHERE l.agent_id = {d}.agent_id AND l.seq > {d}.seq
               AND l.status IN ('pending', 'deferred') AND l.mode <> 'next-message' AND {})))",
        own(d),
        own("l")
    )
}

/// The agents this runner is walking, each with the wake-up for its next message.
#[derive(Clone, Default)]
struct Walkers(Arc<std::sync::Mutex<HashMap<String, Arc<Notify>>>>);

impl Walkers {
    fn register(&self, agent_id: &str) -> Arc<Notify> {
        let wake = Arc::new(Notify::new());
        self.0
            .lock()
            .expect("walkers lock")
            .insert(agent_id.to_string(), wake.clone());
        wake
    }

    /// True when a wake-up arrived that the walker did not see (the main loop must look).
    fn unregister(&self, agent_id: &str, wake: &Notify) -> bool {
        self.0.lock().expect("walkers lock").remove(agent_id);
        wake.notified().now_or_never().is_some()
    }

    /// Routes a wake-up: to the agent's walker when there is one, else to the claim loop.
    /// An empty payload (no agent named) goes to everyone.
    fn wake(&self, agent_id: &str, main: &Notify) {
        let walkers = self.0.lock().expect("walkers lock");
        if agent_id.is_empty() {
            walkers.values().for_each(|w| w.notify_one());
            main.notify_one();
        } else if let Some(w) = walkers.get(agent_id) {
            w.notify_one();
        } else {
            main.notify_one();
        }
    }
}

pub async fn run(runner: Runner) {
    let wake = Arc::new(Notify::new());
    let walkers = Walkers::default();
    tokio::spawn(listen(runner.db.clone(), wake.clone(), walkers.clone()));
    let owner = crate::liveness::start(&runner);
    let slots = Arc::new(Semaphore::new(runner.settings.max_agents.max(1) as usize));
    let poll = Duration::from_millis(runner.settings.poll_interval_ms);
    let mut last_requeue = std::time::Instant::now();
    let mut draining = runner.draining();
    loop {
        if *draining.borrow_and_update() {
            break;
        }
        if last_requeue.elapsed() >= poll {
            last_requeue = std::time::Instant::now();
            if let Err(e) = requeue_stale_accepted(&runner).await {
                tracing::warn!(error = %e, "cannot hand stale accepted deliveries over again");
            }
        }
        let free = slots.available_permits() as i64;
        if free > 0 {
            match claim(&runner, &owner, free).await {
                Ok(agents) => {
                    for agent_id in agents {
                        let permit = slots.clone().try_acquire_owned().expect("claimed within free slots");
                        let (runner, owner, wake) = (runner.clone(), owner.clone(), wake.clone());
                        let (walkers, slots) = (walkers.clone(), slots.clone());
                        tokio::spawn(async move {
                            let missed = walk(&runner, &owner, &agent_id, &walkers, &slots).await;
                            drop(permit);
                            if missed {
                                wake.notify_one();
                            }
                        });
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot claim deliveries");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(poll) => {}
            _ = draining.changed() => {}
        }
    }
    // Each walker hands its agent back before it returns its slot.
    let all = runner.settings.max_agents.max(1) as u32;
    let _ = slots.acquire_many(all).await;
    tracing::info!("delivery loop drained: every agent handed back");
    runner.drain.done.send_replace(true);
}

/// Hands `accepted` deliveries that were never reported on (`runner.accept_timeout_ms`) back
/// to the walkers, each with a retryable `delivery.failed` event saying why.
async fn requeue_stale_accepted(runner: &Runner) -> Result<i64, crate::DeliveryError> {
    let before = relay_bus::now_ms() - runner.settings.accept_timeout_ms;
    let stale = crate::store::keys_where(
        &runner.db,
        "status = 'accepted' AND updated_at < $1::bigint",
        &before.to_string(),
    )
    .await?;
    let n = stale.len() as i64;
    let outcomes = stale
        .into_iter()
        .map(|key| Outcome {
            status: relay_contracts::delivery::DeliveryStatus::Pending,
            available_at: relay_bus::now_ms(),
            reason: Some("accepted but never reported on; handed over again".into()),
            retryable: Some(true),
            metadata: None,
            event: "failed",
            attempts: key.attempts,
            owner: None,
            key,
        })
        .collect();
    runner.settler.settle(outcomes).await?;
    if n > 0 {
        tracing::warn!(
            deliveries = n,
            "accepted deliveries never reported on were handed over again"
        );
        crate::store::wake_runners(&runner.db).await?;
    }
    Ok(n)
}

/// Wakes the loop on `NOTIFY relay_deliveries` (new deliveries, flush, retry, resume,
/// boundaries), from any replica.
async fn listen(db: sqlx::PgPool, wake: Arc<Notify>, walkers: Walkers) {
    loop {
        let e = listen_until_lost(&db, &wake, &walkers).await;
        tracing::warn!(error = %e, "wake-up listener lost; polling until it is back");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn listen_until_lost(db: &sqlx::PgPool, wake: &Notify, walkers: &Walkers) -> sqlx::Error {
    let mut listener = match sqlx::postgres::PgListener::connect_with(db).await {
        Ok(l) => l,
        Err(e) => return e,
    };
    if let Err(e) = listener.listen(WAKE_CHANNEL).await {
        return e;
    }
    loop {
        match listener.recv().await {
            Ok(n) => {
                tracing::debug!(agent_id = n.payload(), "woken");
                walkers.wake(n.payload(), wake)
            }
            Err(e) => return e,
        }
    }
}

/// SQL: is the first delivery of agent `{agent}` that may go due now? (`$1` = now, `$3` = the
/// safe states, `a` = the agent's `delivery_agents` row.)
fn ready(agent: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM (SELECT d.available_at FROM deliveries d
                                WHERE d.agent_id = {agent} AND d.status IN ('pending', 'deferred') AND {}
                                ORDER BY d.priority DESC, d.seq LIMIT 1) first
                 WHERE first.available_at <= $1)",
        may_go("d")
    )
}

/// Leases up to `n` agents that have a delivery ready now.
async fn claim(runner: &Runner, owner: &str, n: i64) -> Result<Vec<String>, sqlx::Error> {
    let now = relay_bus::now_ms();
    let safe: Vec<&str> = runner.settings.safe_states.iter().map(|s| s.as_str()).collect();
    // Agents with waiting deliveries, one index probe each (a loose index scan), kept when
    // free to lease and ready.
    let ready: Vec<(String, bool)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "WITH RECURSIVE waiting (agent_id) AS (
             (SELECT agent_id FROM deliveries WHERE status IN ('pending', 'deferred') ORDER BY agent_id LIMIT 1)
             UNION ALL
             SELECT (SELECT agent_id FROM deliveries WHERE status IN ('pending', 'deferred') AND agent_id > w.agent_id
                     ORDER BY agent_id LIMIT 1)
             FROM waiting w WHERE w.agent_id IS NOT NULL)
         SELECT w.agent_id, a.agent_id IS NULL FROM waiting w LEFT JOIN delivery_agents a ON a.agent_id = w.agent_id
         WHERE w.agent_id IS NOT NULL
           AND (a.agent_id IS NULL OR (NOT a.paused AND (a.lease_until IS NULL OR a.lease_until < $1)))
           AND {}
         LIMIT $2",
        ready("w.agent_id")
    )))
    .bind(now)
    .bind(n)
    .bind(&safe)
    .fetch_all(&runner.db)
    .await?;
    if ready.is_empty() {
        return Ok(Vec::new());
    }
    let new: Vec<&String> = ready.iter().filter(|(_, new)| *new).map(|(id, _)| id).collect();
    if !new.is_empty() {
        sqlx::query(
            "INSERT INTO delivery_agents (agent_id, updated_at) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING",
        )
        .bind(&new)
        .bind(now)
        .execute(&runner.db)
        .await?;
    }
    let ids: Vec<&String> = ready.iter().map(|(id, _)| id).collect();
    sqlx::query_scalar(
        "UPDATE delivery_agents SET lease_until = $2 + $3, owner = $4, updated_at = $2
         WHERE agent_id IN (SELECT agent_id FROM delivery_agents
                            WHERE agent_id = ANY($1) AND NOT paused AND (lease_until IS NULL OR lease_until < $2)
                            FOR UPDATE SKIP LOCKED)
         RETURNING agent_id",
    )
    .bind(&ids)
    .bind(now)
    .bind(runner.settings.lease_ms)
    .bind(owner)
    .fetch_all(&runner.db)
    .await
}

struct Waiting {
    key: DeliveryKey,
    message: Message,
    /// Unix ms after which it is no longer delivered (seed 001 `deadline`).
    deadline: Option<i64>,
    /// Why its workspace's delivery policy refused it when it was sent.
    refusal: Option<String>,
    /// The context of the request that sent the message: the hand-over joins its trace.
    traceparent: Option<String>,
}

type WaitingRow = (
    String,
    String,
    String,
    TextEnum<DeliveryMode>,
    i32,
    i64,
    Json<Message>,
    Option<Json<Agent>>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

/// Walks one leased agent's deliveries until none is ready, lingers a moment for its next
/// message, then gives the lease back. Returns whether a wake-up arrived unseen at the end.
async fn walk(runner: &Runner, owner: &str, agent_id: &str, walkers: &Walkers, slots: &Semaphore) -> bool {
    tracing::debug!(agent_id, "walking the agent's deliveries");
    let wake = walkers.register(agent_id);
    let linger = Duration::from_millis(runner.settings.linger_ms);
    let quarter = Duration::from_millis(runner.settings.lease_ms.max(0) as u64) / 4;
    // The claim has just set the lease. Renewing it is a write (a commit on the path of the
    // next message), so it is renewed once a quarter of it has gone by; each round still
    // checks, by reading, that the lease is ours and the agent not paused.
    let mut renewed = std::time::Instant::now();
    let mut draining = runner.draining();
    loop {
        if *draining.borrow_and_update() {
            hand_back(runner, owner, agent_id).await;
            break;
        }
        let mut wait = linger;
        let renew = renewed.elapsed() >= quarter;
        if renew {
            renewed = std::time::Instant::now();
        }
        match walk_once(runner, owner, agent_id, renew).await {
            Ok(Walked { more: true, .. }) => {
                continue;
            }
            Ok(Walked { next_due, .. }) => {
                // Wake up in time for a deferral or retry that falls due while we linger.
                if let Some(at) = next_due {
                    wait = wait.min(Duration::from_millis((at - relay_bus::now_ms()).max(0) as u64));
                }
            }
            Err(e) => {
                // The lease stays: it expires and the agent's work is retried, by us or another runner.
                tracing::warn!(agent_id, error = %e, "delivery walk interrupted");
                break;
            }
        }
        // Holding the lease a moment makes the agent's next message cost one statement to find
        // instead of a claim, a load and a release; not while other agents wait for a slot.
        if slots.available_permits() > 0 {
            tokio::select! {
                _ = wake.notified() => continue,
                _ = draining.changed() => continue,
                _ = tokio::time::sleep(wait) => {}
            }
        }
        match release_if_done(runner, owner, agent_id).await {
            Ok(true) => break,
            Ok(false) => continue,
            Err(e) => {
                tracing::warn!(agent_id, error = %e, "cannot give the agent's lease back; it will expire");
                break;
            }
        }
    }
    walkers.unregister(agent_id, &wake)
}

/// Deliveries handed over between two stored groups of receipts.
const SETTLE_EVERY: usize = 8;

/// Extends the lease; false when it is no longer ours or the agent was paused.
async fn renew_lease(runner: &Runner, owner: &str, agent_id: &str) -> Result<bool, sqlx::Error> {
    let renewed = sqlx::query(
        "UPDATE delivery_agents SET lease_until = $3 + $4 WHERE agent_id = $1 AND owner = $2 AND NOT paused",
    )
    .bind(agent_id)
    .bind(owner)
    .bind(relay_bus::now_ms())
    .bind(runner.settings.lease_ms)
    .execute(&runner.db)
    .await?;
    Ok(renewed.rows_affected() == 1)
}

/// Gives the lease back, ready work or not, and wakes the other runners to claim it (shutdown).
async fn hand_back(runner: &Runner, owner: &str, agent_id: &str) {
    let released =
        sqlx::query("UPDATE delivery_agents SET lease_until = NULL, owner = NULL WHERE agent_id = $1 AND owner = $2")
            .bind(agent_id)
            .bind(owner)
            .execute(&runner.db)
            .await;
    match released {
        Ok(_) => {
            if let Err(e) = crate::store::wake_agent(&runner.db, "").await {
                tracing::warn!(error = %e, "cannot wake the other runners");
            }
            tracing::info!(agent_id, "agent handed back on shutdown");
        }
        Err(e) => tracing::warn!(agent_id, error = %e, "cannot hand the agent back; its lease will expire"),
    }
}

/// Gives the lease back unless more is ready; true when the walk is over (released, paused
/// meanwhile, or the lease is no longer ours). One statement, so work that arrives meanwhile
/// is either seen here or finds the agent free to claim.
async fn release_if_done(runner: &Runner, owner: &str, agent_id: &str) -> Result<bool, sqlx::Error> {
    let safe: Vec<&str> = runner.settings.safe_states.iter().map(|s| s.as_str()).collect();
    let (mine, released): (i64, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "WITH mine AS (SELECT agent_id FROM delivery_agents WHERE agent_id = $2 AND owner = $4),
              released AS (UPDATE delivery_agents a SET lease_until = NULL, owner = NULL FROM mine
                           WHERE a.agent_id = mine.agent_id AND a.owner = $4 AND (a.paused OR NOT {})
                           RETURNING 1)
         SELECT (SELECT count(*) FROM mine), (SELECT count(*) FROM released)",
        ready("a.agent_id")
    )))
    .bind(relay_bus::now_ms())
    .bind(agent_id)
    .bind(&safe)
    .bind(owner)
    .fetch_one(&runner.db)
    .await?;
    Ok(mine == 0 || released > 0)
}

/// One batch: the agent's deliveries that may go, in order, up to the first not due yet.
/// What one batch found.
struct Walked {
    /// A full batch went out and the lease holds: more may be ready at once.
    more: bool,
    /// When the first delivery that held the others back is due (Unix ms).
    next_due: Option<i64>,
}

async fn walk_once(runner: &Runner, owner: &str, agent_id: &str, renew: bool) -> Result<Walked, crate::DeliveryError> {
    let s = &runner.settings;
    let safe: Vec<&str> = s.safe_states.iter().map(|s| s.as_str()).collect();
    // No rows when the lease is no longer ours or the agent is paused; renewing the lease, when
    // due, in the same statement.
    let lease = if renew {
        "WITH lease AS (UPDATE delivery_agents SET lease_until = $5 + $6
                        WHERE agent_id = $1 AND owner = $4 AND NOT paused RETURNING 1)"
    } else {
        ""
    };
    let query = format!(
        "{lease}
         SELECT d.delivery_id, d.message_id, d.session_id, d.mode, d.attempts, d.available_at, m.doc, a.doc, d.traceparent, d.deadline, d.refusal
         FROM deliveries d JOIN delivery_messages m ON m.message_id = d.message_id
              LEFT JOIN delivery_agents a ON a.agent_id = d.agent_id
         WHERE d.agent_id = $1 AND d.status IN ('pending', 'deferred') AND {} {}
           AND a.owner = $4 AND NOT a.paused
         ORDER BY d.priority DESC, d.seq LIMIT $2",
        may_go("d"),
        if renew { "AND EXISTS (SELECT 1 FROM lease)" } else { "" }
    );
    let mut q = sqlx::query_as::<_, WaitingRow>(sqlx::AssertSqlSafe(query))
        .bind(agent_id)
        .bind(s.batch)
        .bind(&safe)
        .bind(owner);
    let now = relay_bus::now_ms();
    if renew {
        q = q.bind(now).bind(s.lease_ms);
    }
    let rows = q.fetch_all(&runner.db).await?;
    let agent = rows.first().and_then(|r| r.7.as_ref()).map(|Json(a)| a.clone());
    let full = rows.len() as i64 == s.batch;
    let mut next_due = rows.iter().map(|r| r.5).find(|at| *at > now);
    // The first one not due yet holds back the rest.
    let go: Vec<Waiting> = rows
        .into_iter()
        .take_while(|r| r.5 <= now)
        .map(
            |(
                delivery_id,
                message_id,
                session_id,
                mode,
                attempts,
                _,
                Json(message),
                _,
                traceparent,
                deadline,
                refusal,
            )| Waiting {
                key: DeliveryKey {
                    delivery_id,
                    message_id,
                    session_id,
                    agent_id: agent_id.to_string(),
                    mode: mode.0,
                    attempts: attempts as i64 + 1,
                },
                message,
                traceparent,
                deadline,
                refusal,
            },
        )
        .collect();
    let mut pending_settle = None;
    let mut outcomes = Vec::new();
    let mut stopped = false;
    let mut held_until = None;
    let lease = Duration::from_millis(s.lease_ms.max(0) as u64);
    let mut renewed = std::time::Instant::now();
    for w in &go {
        // Shutting down: what is done is settled below and the agent handed back; a whole
        // batch of slow hand-overs would outlast the shutdown grace.
        if runner.shutting_down() {
            stopped = true;
            break;
        }
        tracing::debug!(delivery_id = %w.key.delivery_id, "delivering");
        let late = w.deadline.filter(|d| *d < relay_bus::now_ms()).map(|d| {
            let at = chrono::DateTime::from_timestamp_millis(d)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default();
            format!("deadline: it passed at {at} before the agent could take the message")
        });
        let refused = w.refusal.clone().or(late);
        let mut outcome = match refused.or_else(|| refusal(agent.as_ref(), &w.key, &w.message)) {
            Some(reason) => Outcome::refused(&w.key, reason),
            None => {
                let span = relay_bus::trace::continuing("deliver", w.traceparent.as_deref());
                let receipt = deliver(runner, owner, &w.key, &w.message).instrument(span).await;
                crate::fault::point("handed");
                Outcome::from_receipt(&w.key, receipt, s)
            }
        };
        outcome.owner = Some(owner.to_string());
        let holds_back = outcome.holds_back();
        if holds_back {
            held_until = Some(outcome.available_at);
        }
        outcomes.push(outcome);
        // Settle in small groups while walking: the first receipts are stored without
        // waiting for the whole batch, the settler commits the next group meanwhile.
        if outcomes.len() >= SETTLE_EVERY || holds_back {
            if let Some(prev) = pending_settle.take() {
                crate::settle::wait(prev).await?;
            }
            pending_settle = Some(runner.settler.clone().submit(std::mem::take(&mut outcomes)));
            // A slow agent must not outlive the lease mid-batch: renew it (which also notices
            // a pause or a lost lease) once a quarter of it has gone by.
            if !holds_back && renewed.elapsed() > lease / 4 {
                renewed = std::time::Instant::now();
                if !renew_lease(runner, owner, agent_id).await? {
                    stopped = true;
                    break;
                }
            }
        }
        if holds_back {
            stopped = true;
            break;
        }
    }
    if let Some(prev) = pending_settle.take() {
        crate::settle::wait(prev).await?;
    }
    if !outcomes.is_empty() {
        runner.settler.settle(outcomes).await?;
    }
    // One visit per delivery recorded: how many a walk takes depends on the agent's pace.
    for _ in &go {
        crate::fault::point("recorded");
    }
    // A deferral or retry just stored: its new time is the next one due.
    next_due = held_until.or(next_due);
    Ok(Walked {
        more: full && !stopped && go.len() as i64 == s.batch,
        next_due,
    })
}

/// Why the agent cannot take this message at all (seed 001 step 2), checked again at delivery
/// time because capabilities may have been re-declared since the message was sent.
fn refusal(agent: Option<&Agent>, key: &DeliveryKey, message: &Message) -> Option<String> {
    let Some(agent) = agent else {
        return Some(format!("agent {} is not attached to any session", key.agent_id));
    };
    if matches!(agent.status, AgentRecordStatus::Disposed | AgentRecordStatus::Dead) {
        return Some(match (&agent.offline_since, &agent.host_id) {
            (Some(_), Some(host)) => format!("agent {} was lost with its host {host}", key.agent_id),
            _ => format!("agent {} was released", key.agent_id),
        });
    }
    let minimum;
    let caps = match &agent.capabilities {
        Some(caps) => caps,
        None => {
            minimum = AgentSessionCapabilities::minimum();
            &minimum
        }
    };
    caps.refusal(&message.blocks, Some(key.mode)).map(|r| {
        format!(
            "capability_unsupported: agent {} lacks {} ({})",
            key.agent_id, r.capability, r.reason
        )
    })
}

/// Hands the message to the agent's harness. A harness that cannot be reached gives a
/// retryable failure, never a silent drop.
async fn deliver(runner: &Runner, owner: &str, key: &DeliveryKey, message: &Message) -> Receipt {
    // Relay messages say why they came (dm, mention, thread-reply, …); any message how urgent
    // it is and until when it matters.
    let relay = message.relay.as_ref();
    let req = DeliverRequest {
        context: MessageContext {
            id: key.delivery_id.clone(),
            mode: key.mode,
            reason: relay.map_or_else(|| "message".into(), |r| r.reason.clone()),
            priority: relay
                .and_then(|r| r.priority)
                .or(message.priority)
                .map(|p| p.as_str().to_string()),
            deadline: relay
                .and_then(|r| r.deadline.clone())
                .or_else(|| message.deadline.clone()),
            idempotency_key: Some(key.delivery_id.clone()),
            metadata: Some(serde_json::json!({ "attempt": key.attempts, "runner": owner })),
        },
        message: message.clone(),
    };
    let timeout = Duration::from_millis(runner.settings.deliver_timeout_ms);
    match relay_bus::client::request::<_, Receipt>(&runner.nats, &rpc::agent::deliver(&key.agent_id), &req, timeout)
        .await
    {
        Ok(r) => r,
        Err(e) => Receipt {
            status: ReceiptStatus::Failed,
            delivery_id: Some(key.delivery_id.clone()),
            available_at: None,
            reason: Some(e.to_string()),
            retryable: Some(e.error.retryable),
            metadata: None,
        },
    }
}
