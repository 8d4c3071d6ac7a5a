//! Storing one message in a locked session: its content checked against its targets'
//! capabilities, its turn opened, its deliveries handed over; and reading a session's
//! conversation back (a fork's parent messages first). Beneath both the send path (messages.rs)
//! and an attach that posts its first task (agents.rs).

use crate::error::{RegistryError, Result};
use crate::store::{self, Change, new_id, now_ms};
use relay_contracts::capabilities::DeliveryMode;
use relay_contracts::session::{events::*, *};
use serde_json::{Value, json};
use sqlx::PgConnection;

/// One message to store in a locked session.
#[derive(Default)]
pub(crate) struct Post {
    pub content: Option<MessageContent>,
    pub targets: Vec<Agent>,
    pub message_id: Option<String>,
    pub turn_id: Option<String>,
    pub delivery_mode: Option<DeliveryMode>,
    pub origin: Option<Origin>,
    pub source: Option<Source>,
    pub relay: Option<relay_contracts::messaging::RelayContext>,
    pub priority: Option<relay_contracts::messaging::Priority>,
    pub deadline: Option<String>,
}

/// Blocks, searchable text and role of a message; `invalid_request` for empty or malformed content.
fn parse_content(content: &MessageContent) -> Result<(Vec<Value>, String, MessageRole)> {
    let (blocks, role) = match content {
        MessageContent::Text(text) => (vec![json!({ "type": "text", "text": text })], MessageRole::User),
        MessageContent::Structured(s) => (s.blocks.clone().into_vec(), s.role.unwrap_or(MessageRole::User)),
    };
    if blocks.is_empty() {
        return Err(RegistryError::Invalid("message has no content blocks".into()));
    }
    let mut texts = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let Some(kind) = block.get("type").and_then(Value::as_str) else {
            return Err(RegistryError::Invalid(format!(
                "message block {i} needs a string `type`"
            )));
        };
        if kind == "text" {
            let Some(text) = block.get("text").and_then(Value::as_str) else {
                return Err(RegistryError::Invalid(format!("text block {i} needs a string `text`")));
            };
            texts.push(text);
        }
    }
    let text = texts.join("\n");
    if blocks.len() == texts.len() && text.trim().is_empty() {
        return Err(RegistryError::Invalid("message is empty".into()));
    }
    Ok((blocks, text, role))
}

/// Every target must be able to take the content and the delivery mode; a mismatch is a
/// `capability_unsupported` error before anything is stored, never a silent drop.
fn check_targets(targets: &[Agent], blocks: &[Value], mode: Option<DeliveryMode>) -> Result<()> {
    for agent in targets {
        if let Some(refused) = agent.effective_capabilities().refusal(blocks, mode) {
            return Err(RegistryError::Capability {
                agent_id: agent.agent_id.clone(),
                capability: refused.capability,
                reason: refused.reason,
            });
        }
    }
    Ok(())
}

/// Stores a message in a locked session: opens a turn if none is active, records
/// `turn.started` and `user_message.sent`.
pub(crate) async fn post(change: &mut Change, session: &mut Session, post: Post) -> Result<SendMessageResponse> {
    let content = post
        .content
        .ok_or_else(|| RegistryError::Invalid("message is required".into()))?;
    let (blocks, text, role) = parse_content(&content)?;
    check_targets(&post.targets, &blocks, post.delivery_mode)?;
    let agent_ids: Vec<String> = post.targets.iter().map(|a| a.agent_id.clone()).collect();
    let now = now_ms();

    let turn = match post.turn_id {
        Some(turn_id) => match store::find_turn(change.conn(), &turn_id).await? {
            Some(t) if t.session_id != session.session_id => {
                return Err(RegistryError::Conflict(format!(
                    "turn {turn_id} belongs to another session"
                )));
            }
            Some(t) if t.status != TurnStatus::Active => {
                return Err(RegistryError::Conflict(format!("turn {turn_id} is already complete")));
            }
            Some(t) => (t, false),
            // A new turn of the caller's id, unless one is already active (one at a time).
            None => match store::active_turn(change.conn(), &session.session_id).await? {
                Some(active) => {
                    return Err(RegistryError::Conflict(format!(
                        "session {} has an active turn ({}): name it as turnId, or leave turnId out",
                        session.session_id, active.turn_id
                    )));
                }
                None => (open_turn(change, session, Some(turn_id)).await?, true),
            },
        },
        None => match store::active_turn(change.conn(), &session.session_id).await? {
            Some(t) => (t, false),
            None => (open_turn(change, session, None).await?, true),
        },
    };
    let (turn, opened) = turn;
    // A send that names no mode gets its workspace's default (seed 001 step 3).
    let default_mode = match post.delivery_mode {
        Some(_) => None,
        None => change
            .place(&session.session_id)
            .await?
            .and_then(|p| p.policy)
            .and_then(|p| p.default_mode),
    };
    let message = Message {
        message_id: post.message_id.unwrap_or_else(new_id),
        session_id: session.session_id.clone(),
        turn_id: Some(turn.turn_id.clone()),
        role,
        blocks,
        content_text: text,
        agent_id: None,
        adapter_message_id: None,
        adapter_session_id: None,
        edit_of: None,
        origin: post.origin,
        timestamp: now,
        target_agent_ids: Some(agent_ids.clone()),
        delivery_mode: post.delivery_mode.or(default_mode),
        relay: post.relay,
        priority: post.priority,
        deadline: post.deadline,
    };
    let delivery_ids: Vec<String> = agent_ids.iter().map(|_| new_id()).collect();
    store::insert_message(change.conn(), &message, &delivery_ids).await?;
    change.hand_over_deliveries(&message, &delivery_ids).await?;
    session.last_activity_at = now;
    store::save_session(change.conn(), session).await?;
    let sid = session.session_id.clone();
    if opened {
        let started = TurnStarted {
            session_id: sid.clone(),
            turn_id: turn.turn_id.clone(),
            turn_number: turn.turn_number,
            message_id: message.message_id.clone(),
            agent_ids: agent_ids.clone(),
            initiator: post.source.map(|source| Initiator {
                source,
                source_id: None,
            }),
        };
        change.emit(&sid, started).await?;
    }
    let sent = UserMessageSent {
        session_id: sid.clone(),
        message_id: message.message_id.clone(),
        turn_id: turn.turn_id.clone(),
        turn_number: turn.turn_number,
        agent_ids,
        content,
        origin: post.origin,
        source: post.source,
    };
    change.emit(&sid, sent).await?;
    Ok(SendMessageResponse {
        message_id: message.message_id,
        session_id: sid,
        turn_id: turn.turn_id,
        delivery_ids: Some(delivery_ids),
        schedule_id: None,
    })
}

async fn open_turn(change: &mut Change, session: &Session, turn_id: Option<String>) -> Result<Turn> {
    let mut turn = Turn {
        turn_id: turn_id.unwrap_or_else(new_id),
        session_id: session.session_id.clone(),
        turn_number: 0,
        status: TurnStatus::Active,
        started_at: now_ms(),
        completed_at: None,
        error: None,
        usage: None,
    };
    store::insert_next_turn(change.conn(), &mut turn).await?;
    Ok(turn)
}

/// The conversation of a session. A fork copies nothing: with ancestors, the parent's messages
/// up to the fork point come first, recursively up the chain.
pub(crate) async fn conversation(
    conn: &mut PgConnection,
    session: &Session,
    include_ancestors: bool,
) -> Result<Vec<Message>> {
    let mut chain = vec![(session.session_id.clone(), None)];
    let mut cursor = session.clone();
    // `seen` stops at a cycle (imported data may contain one) instead of looping forever.
    let mut seen = std::collections::HashSet::from([session.session_id.clone()]);
    while include_ancestors
        && let Some(parent_id) = cursor.parent_session_id.clone()
        && seen.insert(parent_id.clone())
    {
        let Some(point) = cursor.fork_point_message_id.clone() else {
            break;
        };
        let Some((_, seq)) = store::find_message(conn, &point).await? else {
            break;
        };
        let Some(parent) = store::load_session(conn, &parent_id).await? else {
            break;
        };
        chain.push((parent_id, Some(seq)));
        cursor = parent;
    }
    let mut out = Vec::new();
    for (sid, upto) in chain.into_iter().rev() {
        out.extend(store::messages_of(conn, &sid, upto).await?);
    }
    Ok(out)
}

/// `invalid_request` unless `message_id` is part of `session_id`'s full conversation.
pub(crate) async fn require_in_conversation(conn: &mut PgConnection, session_id: &str, message_id: &str) -> Result<()> {
    let session = store::require_session(conn, session_id).await?;
    if conversation(conn, &session, true)
        .await?
        .iter()
        .any(|m| m.message_id == message_id)
    {
        return Ok(());
    }
    Err(RegistryError::NotFound {
        what: "message",
        id: format!("{message_id} in the conversation of session {session_id}"),
    })
}
