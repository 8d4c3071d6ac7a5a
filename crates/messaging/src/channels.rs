//! Channels (`channel.*`): named conversations of a workspace that agents join. `#general`
//! exists in every workspace and every live agent is in it.

use crate::error::{MessagingError, Result};
use crate::{Host, store};
use relay_contracts::RequestContext;
use relay_contracts::messaging::*;
use relay_contracts::session::handle_of;
use sqlx::PgConnection;

fn name_of(channel: &str) -> Result<String> {
    channel_of(channel).ok_or_else(|| {
        MessagingError::Invalid(format!(
            "{channel:?} is not a channel name: 1 to {MAX_CHANNEL_CHARS} letters, digits, - or _"
        ))
    })
}

/// The channel, which must exist (#general always does).
pub(crate) async fn existing(conn: &mut PgConnection, workspace: &str, channel: &str) -> Result<Channel> {
    let name = name_of(channel)?;
    if name == GENERAL {
        store::ensure_general(conn, workspace).await?;
    }
    store::channel_by_name(conn, workspace, &name)
        .await?
        .ok_or_else(|| MessagingError::NotFound {
            what: "channel",
            id: format!("#{name}"),
        })
}

fn creator(ctx: &RequestContext, handle: Option<&str>) -> String {
    match handle {
        Some(h) => format!("@{h}"),
        None => ctx.caller.to_string(),
    }
}

/// `channel.create`.
pub async fn create<S: Host>(host: S, ctx: RequestContext, req: CreateChannelRequest) -> Result<Channel> {
    let name = name_of(&req.name)?;
    if let Some(topic) = &req.topic
        && topic.chars().count() > 500
    {
        return Err(MessagingError::Invalid("topic is longer than 500 characters".into()));
    }
    let mut tx = host.messaging().db.begin().await?;
    store::ensure_general(&mut tx, &ctx.workspace).await?;
    let agent = match &ctx.agent {
        Some(id) => Some(S::agent(&mut tx, id).await?),
        None => None,
    };
    let channel = Channel {
        name: name.clone(),
        topic: req.topic,
        created_by: creator(&ctx, agent.as_ref().and_then(|a| a.handle.as_deref())),
        created_at: relay_bus::now_ms(),
        members: 0,
    };
    if !store::insert_channel(&mut tx, &ctx.workspace, &channel).await? {
        return Err(MessagingError::Conflict(format!("channel #{name} exists")));
    }
    if let Some(agent) = &agent {
        store::join(&mut tx, &ctx.workspace, &name, &agent.agent_id).await?;
    }
    let channel = store::channel_by_name(&mut tx, &ctx.workspace, &name)
        .await?
        .unwrap_or(channel);
    tx.commit().await?;
    Ok(channel)
}

/// `channel.list`.
pub async fn list<S: Host>(host: S, ctx: RequestContext, _req: ListChannelsRequest) -> Result<ChannelList> {
    let mut conn = host.messaging().db.acquire().await?;
    store::ensure_general(&mut conn, &ctx.workspace).await?;
    Ok(ChannelList {
        channels: store::channels(&mut conn, &ctx.workspace).await?,
    })
}

/// The agent a membership change is for: the calling agent itself, or the one a person names.
async fn member_of<S: Host>(conn: &mut PgConnection, ctx: &RequestContext, agent: Option<&str>) -> Result<String> {
    if let Some(own) = &ctx.agent {
        return match agent {
            None => Ok(own.clone()),
            Some(_) => Err(MessagingError::Invalid(
                "an agent joins and leaves channels for itself; leave `agent` out".into(),
            )),
        };
    }
    let name = agent.ok_or_else(|| MessagingError::Invalid("name the agent (`agent`: a handle or an id)".into()))?;
    if let Some(h) = handle_of(name)
        && let Some(a) = S::agent_by_handle(conn, &ctx.workspace, &h).await?
    {
        return Ok(a.agent_id);
    }
    let unknown = || MessagingError::NotFound {
        what: if name.starts_with('@') { "handle" } else { "agent" },
        id: name.to_string(),
    };
    if name.starts_with('@') {
        return Err(unknown());
    }
    match S::agent_workspace(conn, name).await? {
        Some(w) if w == ctx.workspace => Ok(name.to_string()),
        _ => Err(unknown()),
    }
}

async fn change_membership<S: Host>(
    host: S,
    ctx: RequestContext,
    req: MembershipRequest,
    join: bool,
) -> Result<MemberList> {
    let mut tx = host.messaging().db.begin().await?;
    let channel = existing(&mut tx, &ctx.workspace, &req.channel).await?;
    if channel.name == GENERAL {
        return Err(MessagingError::Conflict(
            "every live agent is in #general; it cannot be joined or left".into(),
        ));
    }
    let agent_id = member_of::<S>(&mut tx, &ctx, req.agent.as_deref()).await?;
    if join {
        store::join(&mut tx, &ctx.workspace, &channel.name, &agent_id).await?;
    } else {
        store::leave(&mut tx, &ctx.workspace, &channel.name, &agent_id).await?;
    }
    let members = store::members(store::member_agents(&mut tx, &ctx.workspace, &channel.name).await?);
    tx.commit().await?;
    Ok(MemberList {
        channel: channel.name,
        members,
    })
}

/// `channel.join`.
pub async fn join<S: Host>(host: S, ctx: RequestContext, req: MembershipRequest) -> Result<MemberList> {
    change_membership(host, ctx, req, true).await
}

/// `channel.leave`.
pub async fn leave<S: Host>(host: S, ctx: RequestContext, req: MembershipRequest) -> Result<MemberList> {
    change_membership(host, ctx, req, false).await
}

/// `channel.members`.
pub async fn members<S: Host>(host: S, ctx: RequestContext, req: ChannelRef) -> Result<MemberList> {
    let mut conn = host.messaging().db.acquire().await?;
    let channel = existing(&mut conn, &ctx.workspace, &req.channel).await?;
    let members = store::members(store::member_agents(&mut conn, &ctx.workspace, &channel.name).await?);
    Ok(MemberList {
        channel: channel.name,
        members,
    })
}

/// `channel.history`.
pub async fn history<S: Host>(host: S, ctx: RequestContext, req: HistoryRequest) -> Result<MessagePage> {
    let limit = req.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) || req.after.is_some_and(|a| a < 0) {
        return Err(MessagingError::Invalid(
            "limit must be 1..=200 and after at least 0".into(),
        ));
    }
    let mut conn = host.messaging().db.acquire().await?;
    let channel = existing(&mut conn, &ctx.workspace, &req.channel).await?;
    let messages = store::history(&mut conn, &ctx.workspace, &channel.name, req.after.unwrap_or(0), limit).await?;
    let next_cursor = (messages.len() as i64 == limit)
        .then(|| messages.last().map(|m| m.seq))
        .flatten();
    Ok(MessagePage { messages, next_cursor })
}
