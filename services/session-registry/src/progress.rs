//! One owner for a message's progress: the delivery runner's receipts and the agent's harness
//! say what became of each target of a message, and the turn follows from its targets.
//!
//! - `delivery.delivered`: the agent has the message → `user_message.acknowledged`;
//! - the agent went idle after that → `user_message.completed` (`completed`);
//! - `delivery.failed` → completed `error`; `delivery.cancelled` → completed `cancelled`;
//! - no target of a turn left pending → `turn.completed`.
//!
//! The receipts are read from the event log from the registry's own cursor (`registry_cursor`),
//! moved in the transaction that applies a page, so none is lost or applied twice. Whether the
//! agent went idle is asked of its harness (`agent.<id>.turn`) once the delivery is recorded:
//! status events and receipts reach the log by different ways (the harness appends the one,
//! the runner's outbox the other), so their order there proves nothing. A harness marks its
//! CLI busy before it types a message and reports it delivered only after, so "not busy",
//! asked after the receipt was recorded, means the agent finished since. An idle status in the
//! log is the cue to ask; a periodic look catches a cue that was missed.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::store::{self, Change, Stored, now_ms};
use futures::StreamExt;
use relay_bus::follow::{FollowError, Follower};
use relay_contracts::delivery::{CancelDeliveryRequest, DeliveryEvent};
use relay_contracts::events::Event;
use relay_contracts::session::{events::*, *};
use relay_contracts::{ErrorCode, rpc};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The events that move a message on: the runner's final receipts and the agents' statuses.
const FOLLOWER: Follower = Follower {
    lock_key: 0x7265_6c61_7970_7267, // "relayprg"
    cursor_table: "registry_cursor",
    types: &[
        "delivery.delivered",
        "delivery.failed",
        "delivery.cancelled",
        "status.changed",
        "status.idle",
    ],
};

const PAGE: i64 = 500;
/// Sessions whose receipts are applied at once.
const APPLY_AT_ONCE: usize = 4;
/// How often agents with delivered, unfinished messages are asked again: a cue may be missed
/// (the registry stopped between a page and its asks, the harness did not answer).
const RECHECK: Duration = Duration::from_secs(3);
/// Agents asked at once.
const ASK_AT_ONCE: usize = 16;
/// How long the runner may take to cancel a delivery (it may ask the harness to drop it).
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Follows the log and rechecks open messages, when the registry hands deliveries to a runner
/// (alone, nothing would ever report on them).
pub(crate) fn start(reg: &Registry) {
    if !reg.relay.enabled() {
        return;
    }
    tokio::spawn(follow_forever(reg.clone()));
    tokio::spawn(recheck_forever(reg.clone()));
}

async fn follow_forever(reg: Registry) {
    let wake = Arc::new(Notify::new());
    let live = vec![
        "event.committed.delivery.>".to_string(),
        "event.committed.status.>".to_string(),
    ];
    tokio::spawn(relay_bus::follow::watch_live(reg.nats.clone(), live, wake.clone()));
    relay_bus::outbox::drain_forever(&wake, "cannot follow the event log for message progress", || {
        follow(&reg)
    })
    .await
}

impl From<FollowError> for RegistryError {
    fn from(e: FollowError) -> Self {
        match e {
            FollowError::Db(e) => RegistryError::Db(e),
            FollowError::Log(e) => RegistryError::Upstream(e),
        }
    }
}

/// Applies one page, then asks the agents it cued; true when the page was full.
///
/// The follower's turn and cursor are held in one transaction from reading the page to moving
/// the cursor past it. Each session's receipts are applied in a short transaction of their own,
/// a few sessions at once: one transaction for the page would hold every session it touches
/// until its end, and the sends to them would wait behind it. A crash before the cursor moved
/// applies them again, which changes nothing (a target already acknowledged or finished is left
/// as it is).
async fn follow(reg: &Registry) -> Result<bool> {
    let mut turn = reg.db.begin().await?;
    let Some(page) = FOLLOWER.next_page(&mut turn, &reg.nats, PAGE).await? else {
        return Ok(false);
    };
    let mut cued = BTreeSet::new();
    let mut by_session: BTreeMap<String, Vec<(String, DeliveryEvent)>> = BTreeMap::new();
    for e in &page.events {
        match read(e) {
            Read::Receipt(kind, d) => by_session.entry(d.session_id.clone()).or_default().push((kind, d)),
            Read::Idle(agent_id) => {
                cued.insert(agent_id);
            }
            Read::Nothing => {}
        }
    }
    let applied: Vec<Result<Vec<String>>> = futures::stream::iter(by_session.into_values())
        .map(|receipts| apply(reg, receipts))
        .buffer_unordered(APPLY_AT_ONCE)
        .collect()
        .await;
    for agents in applied {
        cued.extend(agents?);
    }
    FOLLOWER.advance(&mut turn, page.next_seq).await?;
    turn.commit().await?;
    settle_all(reg, cued).await;
    Ok(page.events.len() as i64 >= PAGE)
}

/// What an event of the page says.
enum Read {
    /// A runner's final receipt (`delivered`, `failed`, `cancelled`).
    Receipt(String, DeliveryEvent),
    /// The agent went idle: ask it whether it is done.
    Idle(String),
    Nothing,
}

fn read(e: &Event) -> Read {
    if let Some(kind) = e.event_type.strip_prefix("delivery.") {
        return match serde_json::from_value::<DeliveryEvent>(e.payload.clone()) {
            Ok(d) => Read::Receipt(kind.to_string(), d),
            Err(_) => {
                tracing::warn!(event_id = %e.event_id, "a delivery event without its delivery: skipped");
                Read::Nothing
            }
        };
    }
    let status = match e.event_type.as_str() {
        "status.changed" => e.payload.get("status").and_then(|s| s.as_str()),
        t => t.strip_prefix("status."),
    };
    match (status, &e.agent_id) {
        (Some("idle"), Some(agent_id)) => Read::Idle(agent_id.clone()),
        _ => Read::Nothing,
    }
}

/// Applies one session's receipts, in log order, in one transaction; the agents to ask.
async fn apply(reg: &Registry, receipts: Vec<(String, DeliveryEvent)>) -> Result<Vec<String>> {
    let mut change = Change::begin(reg).await?;
    let mut cued = Vec::new();
    for (kind, d) in &receipts {
        cued.extend(receipt(&mut change, kind, d).await?);
    }
    change.commit().await?;
    Ok(cued)
}

/// What a final receipt of the runner means for the message's target.
async fn receipt(change: &mut Change, kind: &str, d: &DeliveryEvent) -> Result<Option<String>> {
    // A purged or unknown session: nothing left to report on.
    let Some(Stored::Live(_)) = change.lock(&d.session_id).await? else {
        return Ok(None);
    };
    let Some(target) = store::target(change.conn(), &d.message_id, &d.agent_id).await? else {
        return Ok(None);
    };
    if target.message.session_id != d.session_id || target.outcome.is_some() {
        return Ok(None);
    }
    match kind {
        "delivered" => {
            if !target.acknowledged {
                acknowledge(change, &target, &d.agent_id).await?;
            }
            return Ok(Some(d.agent_id.clone()));
        }
        "failed" => {
            let why = format!("delivery failed: {}", d.reason.as_deref().unwrap_or("no reason given"));
            finish(change, &target, &d.agent_id, Finished::new(Outcome::Error, Some(why))).await?;
        }
        "cancelled" => {
            let why = d.reason.clone().map(|r| format!("delivery cancelled: {r}"));
            finish(change, &target, &d.agent_id, Finished::new(Outcome::Cancelled, why)).await?;
        }
        _ => {}
    }
    Ok(None)
}

/// Asks each agent, a few at a time, and finishes what it was delivered once it is idle.
async fn settle_all(reg: &Registry, agents: impl IntoIterator<Item = String>) {
    futures::stream::iter(agents)
        .for_each_concurrent(ASK_AT_ONCE, |agent_id| async move {
            if let Err(e) = settle(reg, &agent_id).await {
                tracing::warn!(agent_id = %agent_id, error = %e, "cannot finish the agent's messages yet");
            }
        })
        .await;
}

/// Finishes the messages delivered to `agent_id` (as recorded before asking) once its harness
/// says it is not busy; when the harness is gone with the agent released, they end cancelled.
async fn settle(reg: &Registry, agent_id: &str) -> Result<()> {
    let open = {
        let mut conn = reg.db.acquire().await?;
        store::open_targets(&mut conn, agent_id).await?
    };
    if open.is_empty() {
        return Ok(());
    }
    let asked = crate::turns::ask(reg, &[agent_id.to_string()], false, "").await;
    let finished = if !asked.idle.is_empty() {
        Finished::new(Outcome::Completed, None)
    } else if !asked.unreachable.is_empty() && released(reg, agent_id).await? {
        Finished::new(
            Outcome::Cancelled,
            Some(format!("agent {agent_id} was released before it finished")),
        )
    } else {
        return Ok(());
    };
    let mut by_session: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (session_id, message_id) in open {
        by_session.entry(session_id).or_default().push(message_id);
    }
    for (session_id, messages) in by_session {
        let mut change = Change::begin(reg).await?;
        let Some(Stored::Live(_)) = change.lock(&session_id).await? else {
            continue;
        };
        for message_id in messages {
            if let Some(target) = store::target(change.conn(), &message_id, agent_id).await?
                && target.outcome.is_none()
            {
                finish(&mut change, &target, agent_id, finished.clone()).await?;
            }
        }
        change.commit().await?;
    }
    Ok(())
}

async fn released(reg: &Registry, agent_id: &str) -> Result<bool> {
    let mut conn = reg.db.acquire().await?;
    match store::find_agent(&mut conn, agent_id).await {
        Ok(agent) => Ok(!agent.is_attached()),
        Err(RegistryError::NotFound { .. }) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Every `RECHECK`, asks again the agents with a message delivered a while ago and not finished.
async fn recheck_forever(reg: Registry) {
    loop {
        tokio::time::sleep(RECHECK).await;
        let agents = async {
            let mut conn = reg.db.acquire().await?;
            let before = now_ms() - RECHECK.as_millis() as i64;
            store::agents_with_open_targets(&mut conn, before, 1000).await
        };
        match agents.await {
            Ok(agents) => settle_all(&reg, agents).await,
            Err(e) => tracing::warn!(error = %e, "cannot look for unfinished messages yet"),
        }
    }
}

/// Cancels `deliveries` in the runner as superseded by message `by`. One delivered meanwhile
/// (the runner answers conflict) stays delivered. One the runner does not know yet is still on
/// its way in the hand-off (its send answered before the runner had it): everything committed
/// is handed over, then it is cancelled again, so it cannot go out once the agent is idle.
pub(crate) async fn cancel_deliveries(reg: &Registry, deliveries: &[String], by: &str) {
    let reason = format!("superseded by message {by} (onBusy rollback)");
    let unknown = cancel_each(reg, deliveries, &reason).await;
    if unknown.is_empty() {
        return;
    }
    if let Err(e) = reg.relay.flush().await {
        tracing::warn!(error = %e, "cannot hand over the superseded deliveries to cancel them");
        return;
    }
    for id in cancel_each(reg, &unknown, &reason).await {
        tracing::info!(delivery_id = %id, superseded_by = by, "superseded delivery unknown to the runner; not cancelled");
    }
}

/// Asks the runner to cancel each delivery; returns those it does not know.
async fn cancel_each(reg: &Registry, deliveries: &[String], reason: &str) -> Vec<String> {
    let calls = deliveries.iter().map(|id| async move {
        let req = CancelDeliveryRequest {
            delivery_id: id.clone(),
            reason: Some(reason.to_string()),
        };
        match relay_bus::client::call::<rpc::DeliveryCancel>(&reg.nats, &req, CANCEL_TIMEOUT).await {
            Ok(_) => {
                tracing::info!(delivery_id = %id, reason, "superseded delivery cancelled");
                None
            }
            Err(e) if e.code() == ErrorCode::NotFound => Some(id.clone()),
            Err(e) if e.code() == ErrorCode::Conflict => {
                tracing::info!(delivery_id = %id, error = %e, "superseded delivery not cancelled");
                None
            }
            Err(e) => {
                tracing::warn!(delivery_id = %id, error = %e, "cannot cancel a superseded delivery");
                None
            }
        }
    });
    futures::future::join_all(calls).await.into_iter().flatten().collect()
}

/// The agent has the message (its target is not acknowledged yet; the session is locked).
pub(crate) async fn acknowledge(change: &mut Change, target: &store::Target, agent_id: &str) -> Result<()> {
    let (message, turn) = (&target.message, target.turn()?.clone());
    store::acknowledge_target(change.conn(), &message.message_id, agent_id).await?;
    let ack = UserMessageAcknowledged {
        session_id: message.session_id.clone(),
        message_id: message.message_id.clone(),
        agent_id: agent_id.to_string(),
        turn_id: turn.turn_id,
        turn_number: turn.turn_number,
    };
    change.emit(&message.session_id, ack).await
}

/// How an agent finished a message.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    pub outcome: Outcome,
    pub error: Option<String>,
    pub merged_into: Option<String>,
    pub superseded_by: Option<String>,
}

impl Finished {
    pub fn new(outcome: Outcome, error: Option<String>) -> Self {
        Finished {
            outcome,
            error,
            merged_into: None,
            superseded_by: None,
        }
    }
}

/// Records the agent's outcome on the message (its target has none yet; the session is
/// locked). When no target of the turn is pending any more, the turn completes: success
/// unless some agent's outcome is `error` (cancelled/superseded/merged are neutral). Returns
/// whether it did.
pub(crate) async fn finish(
    change: &mut Change,
    target: &store::Target,
    agent_id: &str,
    done: Finished,
) -> Result<bool> {
    let (message, mut turn) = (&target.message, target.turn()?.clone());
    store::complete_target(
        change.conn(),
        &message.message_id,
        agent_id,
        done.outcome,
        done.error.as_deref(),
    )
    .await?;
    let sid = message.session_id.clone();
    let completed = UserMessageCompleted {
        session_id: sid.clone(),
        message_id: message.message_id.clone(),
        agent_id: agent_id.to_string(),
        turn_id: turn.turn_id.clone(),
        turn_number: turn.turn_number,
        outcome: done.outcome,
        error: done.error,
        merged_into: done.merged_into,
        superseded_by: done.superseded_by,
    };
    change.emit(&sid, completed).await?;

    let (pending, error) = store::turn_progress(change.conn(), &turn.turn_id).await?;
    if pending || turn.status != TurnStatus::Active {
        return Ok(false);
    }
    turn.status = if error.is_some() {
        TurnStatus::Error
    } else {
        TurnStatus::Completed
    };
    turn.completed_at = Some(now_ms());
    turn.error = error.clone();
    store::save_turn(change.conn(), &turn).await?;
    let ended = TurnCompleted {
        session_id: sid.clone(),
        turn_id: turn.turn_id,
        turn_number: turn.turn_number,
        success: error.is_none(),
        error,
        initiator: None,
        outcome: None,
        interrupted: None,
    };
    change.emit(&sid, ended).await?;
    Ok(true)
}
