//! What a caller may read of relay messages: `message.get`, `message.thread`, `message.search`.
//! Another workspace's message, or one an agent is not part of, is not found, exactly as one
//! that never existed.

use crate::error::{MessagingError, Result};
use crate::{Host, check_id, store};
use relay_contracts::RequestContext;
use relay_contracts::messaging::*;
use sqlx::PgConnection;

/// A message the caller may read; `not_found` for anything else, as for what never existed.
async fn readable(conn: &mut PgConnection, ctx: &RequestContext, message_id: &str) -> Result<RelayMessage> {
    check_id("messageId", message_id)?;
    let unknown = || MessagingError::NotFound {
        what: "message",
        id: message_id.to_string(),
    };
    let (m, workspace) = store::find(conn, message_id).await?.ok_or_else(unknown)?;
    if ctx.scope().is_some_and(|own| own != workspace) {
        return Err(unknown());
    }
    if let Some(agent) = &ctx.agent {
        let involved = m.channel.is_some()
            || (m.from.kind == "agent" && &m.from.id == agent)
            || m.recipients.iter().any(|r| &r.agent_id == agent);
        if !involved {
            return Err(unknown());
        }
    }
    Ok(m)
}

/// `message.get`.
pub async fn get<S: Host>(host: S, ctx: RequestContext, req: MessageRef) -> Result<RelayMessage> {
    let mut conn = host.messaging().db.acquire().await?;
    readable(&mut conn, &ctx, &req.message_id).await
}

/// `message.thread`: from any message of the thread, its root and replies in order.
pub async fn thread<S: Host>(host: S, ctx: RequestContext, req: MessageRef) -> Result<ThreadResponse> {
    let mut conn = host.messaging().db.acquire().await?;
    let m = readable(&mut conn, &ctx, &req.message_id).await?;
    let root = match &m.thread_id {
        Some(root_id) => readable(&mut conn, &ctx, root_id).await?,
        None => m,
    };
    let replies = store::replies(&mut conn, &root.message_id).await?;
    Ok(ThreadResponse { root, replies })
}

/// `message.search`.
pub async fn search<S: Host>(host: S, ctx: RequestContext, req: SearchMessagesRequest) -> Result<MessagePage> {
    if req.q.trim().is_empty() || req.q.chars().count() > 500 {
        return Err(MessagingError::Invalid(
            "q must have 1 to 500 characters and a word".into(),
        ));
    }
    let limit = req.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(MessagingError::Invalid("limit must be 1..=200".into()));
    }
    let channel = match &req.channel {
        Some(c) => Some(channel_of(c).ok_or_else(|| MessagingError::Invalid(format!("{c:?} is not a channel name")))?),
        None => None,
    };
    let mut conn = host.messaging().db.acquire().await?;
    let messages = store::search(
        &mut conn,
        ctx.agent.as_deref(),
        &ctx.workspace,
        &req.q,
        channel.as_deref(),
        limit,
    )
    .await?;
    Ok(MessagePage {
        messages,
        next_cursor: None,
    })
}
