//! `/agents`: the directory, one agent (`{name}`, an id or `@handle`, resolved by
//! [`AgentName`]), and its control: pause, resume, stop, input, interrupt, flush, turns, its
//! terminal output.

use crate::extract::{AgentName, Json, Path, Query, Reply, optional_body};
use crate::ops::call;
use crate::responses::{BadRequest, NotFound, Timeout, Unauthorized, Unavailable};
use crate::rest::Reason;
use crate::{ApiError, AppState};
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::capabilities::{AgentSessionCapabilities, DeliveryMode};
use relay_contracts::delivery::{
    AgentHold, AgentRef, FlushRequest, FlushResponse, InputRequest, InputResponse, InterruptRequest, StopAgentRequest,
    StopAgentResponse, TurnState,
};
use relay_contracts::events::QueryRequest;
use relay_contracts::rpc;
use relay_contracts::session::{
    Agent, AgentGetRequest, AgentListRequest, AgentListResponse, CancelTurnRequest, CancelTurnResponse,
    CapabilitiesResponse, SessionRef, TurnsResponse,
};
use serde::{Deserialize, Serialize};

#[utoipa::path(get, path = "/agents", tag = "agents", params(AgentListRequest), responses((status = 200, body = AgentListResponse), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_agents(
    State(s): State<AppState>,
    Query(q): Query<AgentListRequest>,
) -> Reply<AgentListResponse> {
    Ok(Json(call::<rpc::AgentList>(&s, &q).await?))
}

#[utoipa::path(get, path = "/agents/{name}", tag = "agents", params(("name" = String, Path, description = "Agent id or handle (`@bob` or `bob`)")), responses((status = 200, body = Agent), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn get_agent(State(s): State<AppState>, Path(name): Path<String>) -> Reply<Agent> {
    Ok(Json(call::<rpc::AgentGet>(&s, &AgentGetRequest { agent: name }).await?))
}

#[utoipa::path(get, path = "/agents/{name}/capabilities", tag = "agents", params(("name" = String, Path, description = "Agent id or handle")), responses((status = 200, body = CapabilitiesResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn agent_capabilities(
    State(s): State<AppState>,
    Path(name): Path<String>,
) -> Reply<CapabilitiesResponse> {
    // From the directory, which viewers may read too.
    let agent = call::<rpc::AgentGet>(&s, &AgentGetRequest { agent: name }).await?;
    Ok(Json(CapabilitiesResponse {
        capabilities: agent.capabilities.unwrap_or_else(AgentSessionCapabilities::minimum),
        agent_id: agent.agent_id,
        session_id: agent.session_id,
        agent_capabilities: agent.agent_capabilities,
    }))
}

#[utoipa::path(post, path = "/agents/{name}/pause", tag = "agents", params(("name" = String, Path, description = "Agent id")), responses((status = 200, body = AgentHold), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn pause(State(s): State<AppState>, AgentName(name): AgentName) -> Reply<AgentHold> {
    Ok(Json(call::<rpc::AgentPause>(&s, &AgentRef { agent_id: name }).await?))
}

#[utoipa::path(post, path = "/agents/{name}/resume", tag = "agents", params(("name" = String, Path, description = "Agent id")), responses((status = 200, body = AgentHold), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn resume(State(s): State<AppState>, AgentName(name): AgentName) -> Reply<AgentHold> {
    Ok(Json(call::<rpc::AgentResume>(&s, &AgentRef { agent_id: name }).await?))
}

#[utoipa::path(post, path = "/agents/{name}/stop", tag = "agents", params(("name" = String, Path, description = "Agent id")), request_body(content = Option<Reason>), responses((status = 200, body = StopAgentResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn stop(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    body: Bytes,
) -> Reply<StopAgentResponse> {
    let Reason { reason } = optional_body(&body)?;
    let req = StopAgentRequest { agent_id: name, reason };
    Ok(Json(call::<rpc::AgentStop>(&s, &req).await?))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Raw text written to the agent's terminal (include `\r` to press Enter).
    pub data: String,
}

#[utoipa::path(post, path = "/agents/{name}/input", tag = "agents", params(("name" = String, Path, description = "Agent id")), request_body = Input, responses((status = 200, body = InputResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn input(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Json(i): Json<Input>,
) -> Reply<InputResponse> {
    let req = InputRequest {
        agent_id: name,
        data: i.data,
    };
    Ok(Json(call::<rpc::AgentInput>(&s, &req).await?))
}

#[utoipa::path(post, path = "/agents/{name}/interrupt", tag = "agents", params(("name" = String, Path, description = "Agent id or handle")), request_body(content = Option<Reason>), responses((status = 200, description = "`busy`: there was a turn to interrupt", body = TurnState), NotFound, BadRequest, Unauthorized, (status = 503, description = "The harness cannot be reached", body = WireError), Timeout))]
pub(crate) async fn interrupt_agent(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    body: Bytes,
) -> Reply<TurnState> {
    let Reason { reason } = optional_body(&body)?;
    let req = InterruptRequest { agent_id: name, reason };
    Ok(Json(call::<rpc::AgentInterrupt>(&s, &req).await?))
}

#[utoipa::path(post, path = "/sessions/{id}/turns/{turnId}/cancel", tag = "sessions", params(("id" = String, Path, description = "Session id"), ("turnId" = String, Path, description = "Turn id")), request_body(content = Option<Reason>), responses((status = 200, body = CancelTurnResponse), NotFound, (status = 409, description = "The turn is not running", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn cancel_turn(
    State(s): State<AppState>,
    Path((id, turn_id)): Path<(String, String)>,
    body: Bytes,
) -> Reply<CancelTurnResponse> {
    let Reason { reason } = optional_body(&body)?;
    let req = CancelTurnRequest {
        session_id: id,
        turn_id: Some(turn_id),
        reason,
    };
    Ok(Json(call::<rpc::SessionTurnCancel>(&s, &req).await?))
}

#[utoipa::path(get, path = "/sessions/{id}/turns", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = TurnsResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_turns(State(s): State<AppState>, Path(id): Path<String>) -> Reply<TurnsResponse> {
    Ok(Json(
        call::<rpc::SessionTurns>(&s, &SessionRef { session_id: id }).await?,
    ))
}

/// "Interrupt the agents now": cancels the session's running turn.
#[utoipa::path(post, path = "/sessions/{id}/interrupt", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body(content = Option<Reason>), responses((status = 200, body = CancelTurnResponse), NotFound, (status = 409, description = "No turn is running", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn interrupt_session(
    State(s): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply<CancelTurnResponse> {
    let Reason { reason } = optional_body(&body)?;
    let req = CancelTurnRequest {
        session_id: id,
        turn_id: None,
        reason,
    };
    Ok(Json(call::<rpc::SessionTurnCancel>(&s, &req).await?))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Flush {
    pub mode: Option<DeliveryMode>,
}

#[utoipa::path(post, path = "/agents/{name}/flush", tag = "deliveries", params(("name" = String, Path, description = "Agent id")), request_body(content = Option<Flush>), responses((status = 200, body = FlushResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn flush(State(s): State<AppState>, AgentName(name): AgentName, body: Bytes) -> Reply<FlushResponse> {
    let Flush { mode } = optional_body(&body)?;
    let req = FlushRequest { agent_id: name, mode };
    Ok(Json(call::<rpc::DeliveryFlush>(&s, &req).await?))
}

/// `GET /agents/{name}/output`: the agent's last terminal rows.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutputQuery {
    /// Rows, at most 1,000 (100 by default).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// An agent's recent terminal output, oldest row first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutput {
    pub agent_id: String,
    pub rows: Vec<OutputRow>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputRow {
    pub seq: i64,
    pub ts: i64,
    pub text: String,
}

#[utoipa::path(get, path = "/agents/{name}/output", tag = "agents", params(("name" = String, Path, description = "Agent id or handle"), OutputQuery), responses((status = 200, body = AgentOutput), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn agent_output(
    State(s): State<AppState>,
    AgentName(agent_id): AgentName,
    Query(q): Query<OutputQuery>,
) -> Reply<AgentOutput> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::Invalid("limit must be 1..=1000".into()));
    }
    // The directory says whether the caller may see this agent at all.
    call::<rpc::AgentGet>(
        &s,
        &AgentGetRequest {
            agent: agent_id.clone(),
        },
    )
    .await?;
    let req = QueryRequest {
        types: Some(vec!["terminal.output".into()]),
        agents: Some(vec![agent_id.clone()]),
        limit: Some(limit),
        newest_first: Some(true),
        ..Default::default()
    };
    let page = call::<rpc::EventQuery>(&s, &req).await?;
    let rows = page
        .events
        .into_iter()
        .rev()
        .map(|e| OutputRow {
            seq: e.seq,
            ts: e.ts,
            text: e.payload["text"].as_str().unwrap_or_default().to_string(),
        })
        .collect();
    Ok(Json(AgentOutput { agent_id, rows }))
}
