//! Messages and turns: sendMessage, acknowledge/complete, turns, messages, usage.
//!
//! A sent message is stored durably here with the agents it targets and handed to the delivery
//! runner; what became of it, and so of its turn, follows the runner's receipts (progress.rs).
//! `acknowledge`/`complete` remain for an agent that reports for itself.

use crate::Registry;
use crate::agents;
use crate::error::{RegistryError, Result};
use crate::lifecycle::{check_id, lock_or_create};
use crate::posting::{Post, conversation, post};
use crate::progress;
use crate::store::{self, Change, new_id};
use crate::turns::{self, OnBusy};
use relay_contracts::RequestContext;
use relay_contracts::session::*;

/// Why a busy agent's turn was cancelled by a send (`interrupt`, `rollback`).
const BUSY_REASON: &str = "a new message interrupted it";

/// The single entry point for user messages (seed 002): creates the session when missing,
/// auto-attaches `agent` when it has none, opens a turn, routes to the lead by default.
/// Scoped with its session's lock rather than by `scoped`, which would read the session once
/// more on every send.
pub async fn send(reg: Registry, ctx: RequestContext, req: SendMessageRequest) -> Result<SendMessageResponse> {
    check_id("sessionId", &req.session_id)?;
    let on_busy = OnBusy::parse(req.delivery_mode.as_deref())?;
    if let Some(id) = &req.message_id {
        check_id("messageId", id)?;
    }
    if let Some(d) = &req.deadline
        && !relay_contracts::messaging::is_rfc3339(d)
    {
        return Err(RegistryError::Invalid(format!(
            "deadline {d:?} is not an RFC 3339 date-time (e.g. 2026-11-24T18:00:00Z)"
        )));
    }
    if let Some(at) = req.deliver_at {
        relay_bus::scope::check(&reg, &ctx, &req)
            .await
            .map_err(RegistryError::Upstream)?;
        return send_later(&reg, req, at).await;
    }
    let mut change = Change::begin(&reg).await?;
    let (mut session, made) = lock_or_create(&mut change, &req.session_id).await?;
    if let Some(scope) = ctx.scope()
        && change
            .place(&session.session_id)
            .await?
            .is_some_and(|p| p.workspace != scope)
    {
        return Err(RegistryError::session_not_found(&session.session_id));
    }
    // A retried send with the same messageId returns what the first one stored, whatever
    // became of the session since (the message was taken before it closed).
    if let Some(id) = &req.message_id
        && let Some((m, _)) = store::find_message(change.conn(), id).await?
    {
        if m.session_id != session.session_id {
            // Ids are global: one another workspace's message holds is not found here, as that
            // workspace's objects are everywhere; a conflict would say the id is someone's.
            if let Some(scope) = ctx.scope()
                && store::session_workspace(change.conn(), &m.session_id)
                    .await?
                    .is_some_and(|w| w != scope)
            {
                return Err(RegistryError::NotFound {
                    what: "message",
                    id: id.clone(),
                });
            }
            return Err(RegistryError::Conflict(format!(
                "message {id} belongs to another session"
            )));
        }
        let delivery_ids = store::delivery_ids_of(change.conn(), &m).await?;
        return Ok(SendMessageResponse {
            message_id: m.message_id,
            session_id: m.session_id,
            turn_id: m.turn_id.unwrap_or_default(),
            delivery_ids: Some(delivery_ids),
            schedule_id: None,
        });
    }

    if session.status != SessionStatus::Active {
        return Err(RegistryError::Conflict(format!(
            "session {} is {}; only an active session takes messages{}",
            session.session_id,
            session.status.as_str(),
            if session.status == SessionStatus::Closed {
                " (resume it first)"
            } else {
                ""
            }
        )));
    }

    let mut attached: Vec<Agent> = store::session_agents(change.conn(), &session.session_id)
        .await?
        .into_iter()
        .filter(Agent::is_attached)
        .collect();
    if attached.is_empty() {
        let Some(selection) = req.agent else {
            // A session this send would make, with no agent to take the message: none was
            // found (rolled back), as for another workspace's session.
            if made {
                return Err(RegistryError::session_not_found(&session.session_id));
            }
            // A well-formed request the session's state refuses: a conflict.
            return Err(RegistryError::Conflict(format!(
                "session {} has no agents; pass `agent` to attach one",
                session.session_id
            )));
        };
        let attach = AttachRequest {
            role: Some(AgentRole::Lead),
            ..AttachRequest::new(session.session_id.clone(), selection)
        };
        attached.push(agents::attach_agent(&reg, &mut change, &mut session, attach, None).await?);
    }
    let targets = match req.agent_ids {
        None => vec![
            attached
                .iter()
                .find(|a| a.role == AgentRole::Lead)
                .unwrap_or(&attached[0])
                .clone(),
        ],
        Some(AgentTargets::All(_)) => attached.clone(),
        Some(AgentTargets::Ids(ids)) => {
            if ids.is_empty() {
                return Err(RegistryError::Invalid("agentIds must name at least one agent".into()));
            }
            let mut out: Vec<Agent> = Vec::with_capacity(ids.len());
            for id in ids {
                if out.iter().any(|a| a.agent_id == id) {
                    return Err(RegistryError::Invalid(format!("agentIds lists agent {id} twice")));
                }
                let agent = attached
                    .iter()
                    .find(|a| a.agent_id == id)
                    .ok_or_else(|| RegistryError::NotFound {
                        what: "agent",
                        id: format!("{id} in session {}", session.session_id),
                    })?;
                out.push(agent.clone());
            }
            out
        }
    };
    // A busy target: queued (enqueue), refused, or its running turn cancelled first.
    let message_id = req.message_id.unwrap_or_else(new_id);
    if on_busy != OnBusy::Enqueue {
        let ids: Vec<String> = targets.iter().map(|a| a.agent_id.clone()).collect();
        let asked = turns::ask(&reg, &ids, on_busy == OnBusy::Interrupt, BUSY_REASON).await;
        if let Some(agent) = asked.busy.first() {
            let running = store::active_turn(change.conn(), &session.session_id).await?;
            let turn = running
                .as_ref()
                .map_or("its current turn".into(), |t| format!("turn {}", t.turn_id));
            if on_busy == OnBusy::Reject {
                return Err(RegistryError::Conflict(format!(
                    "agent {agent} is busy with {turn}; send with deliveryMode enqueue to queue the message, or interrupt to cancel the turn"
                )));
            }
            let mut interrupted = asked.busy.clone();
            if on_busy == OnBusy::Rollback {
                // What the rolled-back turn has not delivered is cancelled in the runner before
                // the interrupt lets the agent go idle, when an on-idle delivery would go.
                if let Some(turn) = &running {
                    let superseded = store::undelivered_of_turn(change.conn(), &turn.turn_id).await?;
                    progress::cancel_deliveries(&reg, &superseded, &message_id).await;
                }
                interrupted = turns::ask(&reg, &asked.busy, true, BUSY_REASON).await.busy;
            }
            if let Some(turn) = running {
                let superseded_by = (on_busy == OnBusy::Rollback).then_some(message_id.as_str());
                turns::cancel_turn(&mut change, turn, BUSY_REASON, interrupted, superseded_by).await?;
            }
        }
    }
    let sent = post(
        &mut change,
        &mut session,
        Post {
            content: Some(req.message),
            targets,
            message_id: Some(message_id),
            turn_id: req.turn_id,
            delivery_mode: req.delivery.map(|d| d.mode),
            origin: req.origin,
            source: req.source,
            relay: None,
            priority: req.priority,
            deadline: req.deadline,
        },
    )
    .await?;
    change.commit().await?;
    Ok(sent)
}

/// Locks the session and finds the agent's target row on the message, with the message.
async fn locate(change: &mut Change, session_id: &str, message_id: &str, agent_id: &str) -> Result<store::Target> {
    change.lock_live(session_id).await?;
    match store::target(change.conn(), message_id, agent_id).await? {
        Some(target) if target.message.session_id == session_id => Ok(target),
        // Which is missing, the message or the agent's part in it, is told apart only here.
        Some(_) => Err(message_not_found(session_id, message_id)),
        None => match store::find_message(change.conn(), message_id).await? {
            Some((m, _)) if m.session_id == session_id => Err(RegistryError::NotFound {
                what: "agent",
                id: format!("{agent_id} among the targets of message {message_id}"),
            }),
            _ => Err(message_not_found(session_id, message_id)),
        },
    }
}

fn message_not_found(session_id: &str, message_id: &str) -> RegistryError {
    RegistryError::NotFound {
        what: "message",
        id: format!("{message_id} in session {session_id}"),
    }
}

/// An agent has received the message and begun on it.
pub async fn acknowledge(reg: Registry, _ctx: RequestContext, req: AcknowledgeRequest) -> Result<SuccessResponse> {
    let mut change = Change::begin(&reg).await?;
    let target = locate(&mut change, &req.session_id, &req.message_id, &req.agent_id).await?;
    if !target.acknowledged {
        progress::acknowledge(&mut change, &target, &req.agent_id).await?;
    }
    change.commit().await?;
    Ok(OK)
}

/// An agent finished the message; the turn completes when no target of it is pending any more
/// (progress.rs).
pub async fn complete(reg: Registry, _ctx: RequestContext, req: CompleteRequest) -> Result<CompleteResponse> {
    let mut change = Change::begin(&reg).await?;
    let target = locate(&mut change, &req.session_id, &req.message_id, &req.agent_id).await?;
    if let Some(previous) = target.outcome {
        if previous == req.outcome {
            return Ok(CompleteResponse {
                success: true,
                turn_completed: None,
            });
        }
        return Err(RegistryError::Conflict(format!(
            "agent {} already completed message {} with outcome {:?}",
            req.agent_id, req.message_id, previous
        )));
    }
    let done = progress::Finished {
        outcome: req.outcome,
        error: req.error,
        merged_into: req.merged_into,
        superseded_by: req.superseded_by,
    };
    let turn_completed = progress::finish(&mut change, &target, &req.agent_id, done).await?;
    change.commit().await?;
    Ok(CompleteResponse {
        success: true,
        turn_completed: Some(turn_completed),
    })
}

pub async fn turns(reg: Registry, _ctx: RequestContext, req: SessionRef) -> Result<TurnsResponse> {
    let mut conn = reg.db.acquire().await?;
    store::require_session(&mut conn, &req.session_id).await?;
    Ok(TurnsResponse {
        turns: store::turns_of(&mut conn, &[req.session_id]).await?,
    })
}

pub async fn list(reg: Registry, _ctx: RequestContext, req: MessagesRequest) -> Result<MessagesResponse> {
    let mut conn = reg.db.acquire().await?;
    let limit = req.limit.unwrap_or(500);
    if !(1..=5000).contains(&limit) {
        return Err(RegistryError::Invalid("limit must be between 1 and 5000".into()));
    }
    let skip = req.cursor.unwrap_or(0);
    if skip < 0 {
        return Err(RegistryError::Invalid("cursor must not be negative".into()));
    }
    let session = store::require_session(&mut conn, &req.session_id).await?;
    let all = conversation(&mut conn, &session, req.include_ancestors.unwrap_or(true)).await?;
    let total = all.len() as i64;
    let mut messages: Vec<Message> = all.into_iter().skip(skip as usize).take(limit as usize).collect();
    relay_bus::fit_json(&mut messages, reg.settings.max_reply_bytes);
    let read = skip + messages.len() as i64;
    Ok(MessagesResponse {
        messages,
        next_cursor: (read < total).then_some(read),
    })
}

/// Aggregated usage reported for a session (seed 002 `session.usage`): stored, acknowledged.
pub async fn usage(reg: Registry, _ctx: RequestContext, req: UsageRequest) -> Result<UsageResponse> {
    let counts = [
        req.adapter_count,
        req.total_calls,
        req.total_input_tokens,
        req.total_output_tokens,
        req.total_tokens,
    ];
    if counts.iter().any(|n| *n < 0) {
        return Err(RegistryError::Invalid("usage counts must not be negative".into()));
    }
    let mut change = Change::begin(&reg).await?;
    store::lock_live(change.conn(), &req.session_id).await?;
    store::upsert_usage(change.conn(), &req).await?;
    change.commit().await?;
    Ok(UsageResponse { acknowledged: true })
}

/// `deliverAt`: the message is held by the automation service as a one-time schedule (which
/// sends it then, as this caller) rather than here, so nothing waits in an agent's queue ahead
/// of messages sent meanwhile. Only a plain text message to the session's agents can wait.
async fn send_later(reg: &Registry, req: SendMessageRequest, at: i64) -> Result<SendMessageResponse> {
    use relay_contracts::automation::{CreateScheduleRequest, ScheduleAction};
    if !(0..=253_402_300_799_000).contains(&at) {
        return Err(RegistryError::Invalid("deliverAt: a Unix time in ms".into()));
    }
    let MessageContent::Text(text) = req.message else {
        return Err(RegistryError::Invalid("deliverAt takes a plain text message".into()));
    };
    let agent_ids = match req.agent_ids {
        None => None,
        Some(AgentTargets::Ids(ids)) => Some(ids),
        Some(AgentTargets::All(_)) => None,
    };
    if req.agent.is_some() || req.turn_id.is_some() {
        return Err(RegistryError::Invalid(
            "deliverAt cannot attach an agent or name a turn".into(),
        ));
    }
    {
        let mut conn = reg.db.acquire().await?;
        let session = store::lock_live(&mut conn, &req.session_id).await?;
        if session.status != SessionStatus::Active {
            return Err(RegistryError::Conflict(format!(
                "session {} is {}; only an active session takes messages",
                session.session_id,
                session.status.as_str()
            )));
        }
    }
    let schedule_id = deferred_schedule_id(req.message_id.unwrap_or_else(new_id));
    let create = CreateScheduleRequest {
        schedule_id: Some(schedule_id.clone()),
        name: Some(format!("message to session {} at {at}", req.session_id)),
        cron: None,
        time_zone: None,
        at: Some(at as f64),
        action: ScheduleAction::SendMessage {
            session_id: req.session_id.clone(),
            text,
            mode: req.delivery.map(|d| d.mode),
            agent_ids,
            on_busy: req.delivery_mode,
            priority: req.priority,
            deadline: req.deadline,
        },
    };
    let timeout = std::time::Duration::from_secs(5);
    let schedule = relay_bus::client::call::<relay_contracts::rpc::ScheduleCreate>(&reg.nats, &create, timeout)
        .await
        .map_err(RegistryError::Upstream)?;
    Ok(SendMessageResponse {
        // The id the schedule's run sends it with.
        message_id: format!("{}-{}", schedule.schedule_id, schedule.at.unwrap_or(at)),
        session_id: req.session_id,
        turn_id: String::new(),
        delivery_ids: None,
        schedule_id: Some(schedule.schedule_id),
    })
}

/// The schedule that holds a `deliverAt` message: named after its message id so a retried send
/// finds the same schedule, hashed when that id has characters a schedule id may not.
fn deferred_schedule_id(message_id: String) -> String {
    use sha2::{Digest, Sha256};
    let id = format!("deliver-{message_id}");
    if relay_contracts::is_name_id(&id) {
        return id;
    }
    let digest = Sha256::digest(message_id.as_bytes());
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("deliver-h{hex}")
}

#[cfg(test)]
mod deferred_tests {
    use super::deferred_schedule_id;

    #[test]
    fn a_deferred_message_id_with_any_characters_makes_a_valid_stable_schedule_id() {
        assert_eq!(deferred_schedule_id("m-1".into()), "deliver-m-1");
        let odd = deferred_schedule_id("\u{ec}L\u{1f60d}".into());
        assert!(relay_contracts::is_name_id(&odd), "{odd}");
        assert_eq!(odd, deferred_schedule_id("\u{ec}L\u{1f60d}".into()));
        assert!(relay_contracts::is_name_id(&deferred_schedule_id("x".repeat(200))));
    }
}
