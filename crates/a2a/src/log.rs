//! A task folded from the event log over the bus (`event.query`): what the gateway answers
//! `GetTask` with and automation starts a task's push from.

use crate::task::{SENT, TaskFold};
use relay_contracts::WireError;
use relay_contracts::a2a::TaskKey;
use relay_contracts::events::{Event, QueryRequest};
use relay_contracts::rpc;
use std::time::Duration;

const PAGE: i64 = 1000;

/// The session's `session.user_message.sent` events (one per message), oldest first.
pub async fn sent_events(
    nats: &async_nats::Client,
    session_id: &str,
    timeout: Duration,
) -> Result<Vec<Event>, WireError> {
    let mut out = Vec::new();
    let mut cursor = None;
    loop {
        let req = QueryRequest {
            types: Some(vec![SENT.into()]),
            session_ids: Some(vec![session_id.into()]),
            cursor,
            limit: Some(PAGE),
            ..Default::default()
        };
        let page = relay_bus::client::call::<rpc::EventQuery>(nats, &req, timeout).await?;
        out.extend(page.events);
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return Ok(out),
        }
    }
}

/// The seq of the event that began the task, if its message was sent.
pub async fn start_seq(nats: &async_nats::Client, key: &TaskKey, timeout: Duration) -> Result<Option<i64>, WireError> {
    Ok(sent_events(nats, &key.session_id, timeout)
        .await?
        .iter()
        .find(|e| e.payload.get("messageId").and_then(|m| m.as_str()) == Some(key.message_id.as_str()))
        .map(|e| e.seq))
}

/// The task as the log has it, up to seq `upto` (all of it when `None`); not `started` when
/// its message is not in the log.
pub async fn fold(
    nats: &async_nats::Client,
    key: &TaskKey,
    upto: Option<i64>,
    timeout: Duration,
) -> Result<TaskFold, WireError> {
    match start_seq(nats, key, timeout).await? {
        Some(start) => fold_from(nats, key, start, upto, timeout).await,
        None => Ok(TaskFold::default()),
    }
}

/// The same, from the seq of the event that began it.
pub async fn fold_from(
    nats: &async_nats::Client,
    key: &TaskKey,
    start: i64,
    upto: Option<i64>,
    timeout: Duration,
) -> Result<TaskFold, WireError> {
    let mut fold = TaskFold::default();
    let mut cursor = Some(start - 1);
    loop {
        let req = QueryRequest {
            session_ids: Some(vec![key.session_id.clone()]),
            cursor,
            limit: Some(PAGE),
            ..Default::default()
        };
        let page = relay_bus::client::call::<rpc::EventQuery>(nats, &req, timeout).await?;
        for e in page.events.iter().take_while(|e| upto.is_none_or(|u| e.seq <= u)) {
            fold.apply(e, key);
            // Past an interrupt too: it may have been answered since.
            if fold.ended() {
                return Ok(fold);
            }
        }
        match page.next_cursor {
            Some(c) if upto.is_none_or(|u| c < u) => cursor = Some(c),
            _ => return Ok(fold),
        }
    }
}
