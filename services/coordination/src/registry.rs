//! What coordination asks of the session registry, which owns agents, channels and relay
//! messages. Calls made while serving a request go out as this service in the caller's
//! workspace (relay_bus::context); [`as_caller`] forwards the caller itself where the
//! registry's own scoping should apply (another workspace's agent is then `not_found`).

use crate::error::{CoordinationError, Result};
use relay_bus::client::call;
use relay_contracts::actions::SetToolsRequest;
use relay_contracts::messaging::{
    ActionResultPosted, ActionResultRequest, ChannelRef, MemberList, SendForRequest, SendRequest, SendResponse,
};
use relay_contracts::rpc;
use relay_contracts::session::{Agent, AgentGetRequest};
use relay_contracts::{ErrorCode, RequestContext};
use serde_json::Value;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `fut` with its calls made as the caller of `ctx` (its key's or agent's scope).
pub async fn as_caller<F: std::future::Future>(ctx: &RequestContext, fut: F) -> F::Output {
    relay_bus::context::act_as(ctx.clone(), fut).await
}

/// Runs `fut` with its calls made as this service, in `workspace`.
pub async fn as_service<F: std::future::Future>(workspace: &str, fut: F) -> F::Output {
    let ctx = RequestContext::new(relay_bus::context::identity(), workspace);
    relay_bus::context::act_as(ctx, fut).await
}

/// An agent by id or handle, as the current context may see it.
pub async fn agent(nats: &async_nats::Client, agent: &str) -> Result<Agent> {
    let req = AgentGetRequest {
        agent: agent.to_string(),
    };
    Ok(call::<rpc::AgentGet>(nats, &req, TIMEOUT).await?)
}

/// The agent with id `agent_id`, as the current context may see it. `agent.get` reads a
/// handle-shaped name as a handle first, so an answer for another agent (an id that is also a
/// live agent's handle) is refused rather than taken for this one.
pub async fn agent_by_id(nats: &async_nats::Client, agent_id: &str) -> Result<Agent> {
    let found = agent(nats, agent_id).await?;
    if found.agent_id != agent_id {
        return Err(CoordinationError::Conflict(format!(
            "agent id {agent_id} is also the handle of agent {}: it cannot be looked up by id",
            found.agent_id
        )));
    }
    Ok(found)
}

/// An agent by id in `workspace`, `None` once it is gone (purged, or never there).
pub async fn find(nats: &async_nats::Client, workspace: &str, agent_id: &str) -> Result<Option<Agent>> {
    match as_service(workspace, agent_by_id(nats, agent_id)).await {
        Ok(a) => Ok(Some(a)),
        Err(CoordinationError::Upstream(e)) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Lists the agent's actions in its AG-UI `tools.items` (the registry checks it is attached
/// and declares `actions.expose`); the agent as it is now.
pub async fn set_tools(nats: &async_nats::Client, agent_id: &str, items: Vec<Value>) -> Result<Agent> {
    let req = SetToolsRequest {
        agent_id: agent_id.to_string(),
        items,
    };
    Ok(call::<rpc::SessionAgentSetTools>(nats, &req, TIMEOUT).await?)
}

/// A channel's live members, in the current workspace.
pub async fn members(nats: &async_nats::Client, channel: &str) -> Result<MemberList> {
    let req = ChannelRef {
        channel: channel.to_string(),
    };
    Ok(call::<rpc::ChannelMembers>(nats, &req, TIMEOUT).await?)
}

/// Sends `message` for the caller of `ctx`, as if it had called `message.send` itself.
pub async fn send_for(nats: &async_nats::Client, ctx: &RequestContext, message: SendRequest) -> Result<SendResponse> {
    let req = SendForRequest {
        agent_id: ctx.agent.clone(),
        caller: ctx.caller.to_string(),
        message,
    };
    as_service(&ctx.workspace, async {
        Ok(call::<rpc::MessageSendFor>(nats, &req, TIMEOUT).await?)
    })
    .await
}

/// Tells `to` how its invocation of `from`'s action ended, once per `key`.
pub async fn action_result(
    nats: &async_nats::Client,
    workspace: &str,
    from: &str,
    to: &str,
    text: String,
    key: String,
) -> Result<ActionResultPosted> {
    let req = ActionResultRequest {
        from_agent_id: from.to_string(),
        to_agent_id: to.to_string(),
        text,
        idempotency_key: key,
    };
    as_service(workspace, async {
        Ok(call::<rpc::MessageActionResult>(nats, &req, TIMEOUT).await?)
    })
    .await
}
