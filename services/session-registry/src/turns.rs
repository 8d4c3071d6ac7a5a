//! Control of a running turn: `session.turn.cancel`, and what a send does when a target agent
//! is busy (`deliveryMode` enqueue, reject, interrupt, rollback). Each agent's harness knows
//! whether its CLI is busy and how to interrupt it (`agent.<id>.turn`); the registry asks it
//! outside any transaction where it can, and records the cancelled turn.

use crate::Registry;
use crate::error::{RegistryError, Result};
use crate::lifecycle::check_id;
use crate::store::{self, Change, now_ms};
use relay_contracts::delivery::{TurnControl, TurnState};
use relay_contracts::session::{events::*, *};
use relay_contracts::{RequestContext, rpc};
use std::time::Duration;

/// How long a harness may take to say whether its CLI is busy (and to send the interrupt).
const HARNESS_TIMEOUT: Duration = Duration::from_secs(5);

/// What a send does when a target agent is busy with a running turn (seed 002 `deliveryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnBusy {
    Enqueue,
    Reject,
    Interrupt,
    Rollback,
}

impl OnBusy {
    pub(crate) fn parse(mode: Option<&str>) -> Result<OnBusy> {
        match mode {
            None | Some("enqueue") => Ok(OnBusy::Enqueue),
            Some("reject") => Ok(OnBusy::Reject),
            Some("interrupt") => Ok(OnBusy::Interrupt),
            Some("rollback") => Ok(OnBusy::Rollback),
            Some(other) => Err(RegistryError::Invalid(format!(
                "deliveryMode must be enqueue, reject, interrupt or rollback, got `{other}`"
            ))),
        }
    }
}

/// What the agents' harnesses answered.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    /// Busy when asked (and interrupted, when that was asked).
    pub busy: Vec<String>,
    pub idle: Vec<String>,
    pub unreachable: Vec<String>,
}

/// Asks each agent's harness whether its CLI is busy, interrupting it when `interrupt`.
pub(crate) async fn ask(reg: &Registry, agents: &[String], interrupt: bool, reason: &str) -> Asked {
    let control = TurnControl {
        interrupt,
        reason: Some(reason.to_string()),
    };
    let control = &control;
    let replies = futures::future::join_all(agents.iter().map(|agent| async move {
        relay_bus::client::request::<_, TurnState>(&reg.nats, &rpc::agent::turn(agent), control, HARNESS_TIMEOUT).await
    }))
    .await;
    let mut asked = Asked::default();
    for (agent, reply) in agents.iter().zip(replies) {
        match reply {
            Ok(state) if state.busy => asked.busy.push(agent.clone()),
            Ok(_) => asked.idle.push(agent.clone()),
            Err(e) => {
                tracing::info!(agent_id = %agent, error = %e, "harness did not answer agent.turn");
                asked.unreachable.push(agent.clone());
            }
        }
    }
    asked
}

/// Records `turn` as cancelled (`session.turn.completed`, outcome `cancelled`). With
/// `superseded_by`, its messages' unfinished targets complete `superseded` by that message.
pub(crate) async fn cancel_turn(
    change: &mut Change,
    mut turn: Turn,
    reason: &str,
    interrupted: Vec<String>,
    superseded_by: Option<&str>,
) -> Result<Turn> {
    turn.status = TurnStatus::Cancelled;
    turn.completed_at = Some(now_ms());
    turn.error = Some(format!("cancelled: {reason}"));
    store::save_turn(change.conn(), &turn).await?;
    let sid = turn.session_id.clone();
    if let Some(by) = superseded_by {
        for (message_id, agent_id) in store::unfinished_targets(change.conn(), &turn.turn_id).await? {
            store::complete_target(change.conn(), &message_id, &agent_id, Outcome::Superseded, None).await?;
            let done = UserMessageCompleted {
                session_id: sid.clone(),
                message_id,
                agent_id,
                turn_id: turn.turn_id.clone(),
                turn_number: turn.turn_number,
                outcome: Outcome::Superseded,
                error: None,
                merged_into: None,
                superseded_by: Some(by.to_string()),
            };
            change.emit(&sid, done).await?;
        }
    }
    let completed = TurnCompleted {
        session_id: sid.clone(),
        turn_id: turn.turn_id.clone(),
        turn_number: turn.turn_number,
        success: false,
        error: turn.error.clone(),
        initiator: None,
        outcome: Some(Outcome::Cancelled),
        interrupted: Some(interrupted),
    };
    change.emit(&sid, completed).await?;
    tracing::info!(session_id = %sid, turn_id = %turn.turn_id, reason, "turn cancelled");
    Ok(turn)
}

/// The turn a cancel names, or the session's running one; `conflict` when it is not running.
async fn running_turn(change: &mut Change, req: &CancelTurnRequest) -> Result<Turn> {
    let turn = match &req.turn_id {
        Some(id) => store::find_turn(change.conn(), id)
            .await?
            .filter(|t| t.session_id == req.session_id)
            .ok_or_else(|| RegistryError::NotFound {
                what: "turn",
                id: format!("{id} in session {}", req.session_id),
            })?,
        None => store::active_turn(change.conn(), &req.session_id)
            .await?
            .ok_or_else(|| RegistryError::Conflict(format!("session {} has no running turn", req.session_id)))?,
    };
    if turn.status != TurnStatus::Active {
        return Err(RegistryError::Conflict(format!(
            "turn {} is not running (it ended {:?})",
            turn.turn_id, turn.status
        )));
    }
    Ok(turn)
}

/// `session.turn.cancel`: interrupts the turn's busy agents, then records the turn cancelled.
/// Deliveries not yet handed to an agent stay queued.
pub async fn cancel(reg: Registry, _ctx: RequestContext, req: CancelTurnRequest) -> Result<CancelTurnResponse> {
    check_id("sessionId", &req.session_id)?;
    if let Some(id) = &req.turn_id {
        check_id("turnId", id)?;
    }
    let reason = req
        .reason
        .clone()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "cancelled by request".into());
    // Which agents, read first: the harnesses are asked outside the transaction.
    let agents = {
        let mut change = Change::begin(&reg).await?;
        store::require_session(change.conn(), &req.session_id).await?;
        let turn = running_turn(&mut change, &req).await?;
        store::turn_members(change.conn(), &turn.turn_id).await?.0
    };
    let asked = ask(&reg, &agents, true, &reason).await;
    let mut change = Change::begin(&reg).await?;
    store::lock_live(change.conn(), &req.session_id).await?;
    let turn = running_turn(&mut change, &req).await?;
    let turn = cancel_turn(&mut change, turn, &reason, asked.busy.clone(), None).await?;
    change.commit().await?;
    Ok(CancelTurnResponse {
        turn,
        interrupted: asked.busy,
        idle: asked.idle,
        unreachable: asked.unreachable,
    })
}
