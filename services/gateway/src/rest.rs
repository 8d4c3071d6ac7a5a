//! REST `/api/v1` (seed 003 §2.3 and §6.6, plus the Makaio session operations). Each handler
//! turns the HTTP request into a bus request, so the services stay the only source of truth.
//!
//! An agent's `:name` in a path is its agent id (the id a harness is attached under).

use crate::extract::{AgentName, Json, Path, Query, Reply, optional_body, parse};
use crate::ops::events::EventsQuery;
use crate::ops::sessions::{CreateSession, Created, SendMessage, Sent};
use crate::ops::{call, find_session};
use crate::responses::{BadRequest, Conflict, NotAdmin, NotFound, RateLimited, Timeout, Unauthorized, Unavailable};
use crate::{ApiError, AppState, auth};
use axum::extract::State;
use axum::http::StatusCode;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::capabilities::{AgentSessionCapabilities, DeliveryMode};
use relay_contracts::cost::{
    BudgetsRequest, BudgetsResponse, ContextWindowRequest, ContextWindowResponse, Report, ReportRequest,
};
use relay_contracts::delivery::{
    AgentHold, AgentRef, CancelDeliveryRequest, Delivery, DeliveryRef, FlushRequest, FlushResponse, InputRequest,
    InputResponse, InterruptRequest, ListDeliveriesRequest, ListDeliveriesResponse, StopAgentRequest,
    StopAgentResponse, TurnState,
};
use relay_contracts::events::{QueryRequest, QueryResponse};
use relay_contracts::hosts::{HostList, HostListRequest};
use relay_contracts::keys::{ApiKey, CreateKeyRequest, CreatedKey, KeyList, KeyRef, ListKeysRequest};
use relay_contracts::permission::{
    AnswerRequest, AnswerResponse, DecideRequest, DecideResponse, GetPermissionRequest, GetQuestionRequest,
    ListRequest as PendingListRequest, Permission, PermissionList, Question, QuestionList,
};
use relay_contracts::session::{
    Agent, AgentGetRequest, AgentListRequest, AgentListResponse, ApprovalPolicy, CancelTurnRequest, CancelTurnResponse,
    CapabilitiesResponse, CloseRequest, ForkKind, ForkRequest, ListRequest, ListResponse, MessagesRequest,
    MessagesResponse, PurgeResponse, Session, SessionIdResponse, SessionRef, SuccessResponse, TurnsResponse,
    UpdateRequest,
};
use relay_contracts::workspace::{
    CreateWorkspaceRequest, DeliveryPolicy, ListWorkspacesRequest, SetDeliveryPolicyRequest, Workspace,
    WorkspaceDeleted, WorkspaceList, WorkspaceRef,
};
use relay_contracts::{Rpc, rpc};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------------
// Sessions

#[utoipa::path(post, path = "/sessions", tag = "sessions", request_body(content = Option<CreateSession>, description = "Seed 003: agent, cli, task, cwd. No body, an empty one or `null` is `{}`."), responses((status = 201, body = Created), (status = 404, description = "No agent-spawner has a command for this cli", body = WireError), (status = 409, description = "A session with this sessionId exists", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn create_session(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let req: CreateSession = optional_body(&body)?;
    Ok((StatusCode::CREATED, Json(crate::ops::sessions::create(&s, req).await?)))
}

#[utoipa::path(get, path = "/sessions", tag = "sessions", params(ListRequest), responses((status = 200, body = ListResponse), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_sessions(State(s): State<AppState>, Query(q): Query<ListRequest>) -> Reply<ListResponse> {
    Ok(Json(call::<rpc::SessionList>(&s, &q).await?))
}

/// `GET /sessions/search`: full-text search over titles and messages.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQuery {
    /// Web-search syntax over the sessions' titles and messages: words, "a phrase", -without,
    /// or.
    #[param(min_length = 1, max_length = 1000, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub q: String,
    pub status: Option<relay_contracts::session::StatusFilter>,
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
    #[param(minimum = 0)]
    pub offset: Option<i64>,
}

#[utoipa::path(get, path = "/sessions/search", tag = "sessions", params(SearchQuery), responses((status = 200, description = "Matching sessions with a preview of what matched", body = ListResponse), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn search_sessions(State(s): State<AppState>, Query(q): Query<SearchQuery>) -> Reply<ListResponse> {
    if q.q.trim().is_empty() || q.q.chars().count() > 1000 {
        return Err(ApiError::Invalid("q: 1 to 1000 characters, not blank".into()));
    }
    let req = relay_contracts::session::SearchRequest {
        query: q.q,
        status: q.status,
        is_imported: None,
        limit: q.limit,
        offset: q.offset,
    };
    Ok(Json(call::<rpc::SessionSearch>(&s, &req).await?))
}

#[utoipa::path(get, path = "/sessions/counts", tag = "sessions", responses((status = 200, description = "How many sessions are in each status", body = relay_contracts::session::StatusCounts), Unauthorized, Unavailable, Timeout))]
pub(crate) async fn session_counts(State(s): State<AppState>) -> Reply<relay_contracts::session::StatusCounts> {
    let req = relay_contracts::session::StatusCountsRequest {};
    Ok(Json(call::<rpc::SessionGetStatusCounts>(&s, &req).await?))
}

#[utoipa::path(get, path = "/sessions/{id}", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = Session), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn get_session(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Session> {
    Ok(Json(find_session(&s, id).await?))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Milliseconds from creation to the end.
    pub duration: i64,
    /// Messages in the session.
    pub item_count: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Ended {
    pub success: bool,
    pub summary: Summary,
}

/// Seed 003 `DELETE /api/v1/sessions/:id` ("End session"): releases the session's agents and
/// closes it. The ended session stays readable (`GET` answers it with status `closed`); purging
/// deletes it.
#[utoipa::path(delete, path = "/sessions/{id}", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = Ended), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn end_session(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Ended> {
    // Routes that look something up first check the role of what they will change up front:
    // a viewer learns nothing from a 404 it may not act on anyway.
    auth::check_role(rpc::SessionClose::SUBJECT)?;
    let session = find_session(&s, id.clone()).await?;
    for agent in &session.agents {
        let stop = StopAgentRequest {
            agent_id: agent.agent_id.clone(),
            reason: Some("session ended".into()),
        };
        match call::<rpc::AgentStop>(&s, &stop).await {
            Ok(_) => {}
            Err(ApiError::Bus(e)) if e.code() == relay_contracts::ErrorCode::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let mut item_count = 0;
    let mut cursor = None;
    loop {
        let page = MessagesRequest {
            session_id: id.clone(),
            include_ancestors: Some(false),
            limit: Some(5_000),
            cursor,
        };
        let r: MessagesResponse = call::<rpc::SessionMessages>(&s, &page).await?;
        item_count += r.messages.len() as i64;
        match r.next_cursor {
            Some(c) if !r.messages.is_empty() => cursor = Some(c),
            _ => break,
        }
    }
    let close = CloseRequest {
        session_id: id,
        reason: Some("ended".into()),
    };
    match call::<rpc::SessionClose>(&s, &close).await {
        Ok(_) => {}
        // Already closed: ending it again is still an end.
        Err(ApiError::Bus(e)) if e.code() == relay_contracts::ErrorCode::Conflict => {}
        Err(e) => return Err(e),
    }
    Ok(Json(Ended {
        success: true,
        summary: Summary {
            duration: (relay_bus::now_ms() - session.created_at).max(0),
            item_count,
        },
    }))
}

#[utoipa::path(post, path = "/sessions/{id}/messages", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body = SendMessage, responses((status = 200, body = Sent), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn send_message(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Json(req): Json<SendMessage>,
) -> Reply<Sent> {
    Ok(Json(crate::ops::sessions::send(&s, id, req).await?))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    pub reason: Option<String>,
}

#[utoipa::path(post, path = "/sessions/{id}/close", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body(content = Option<Reason>), responses((status = 200, body = SuccessResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn close_session(
    State(s): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply<SuccessResponse> {
    let Reason { reason } = optional_body(&body)?;
    let req = CloseRequest { session_id: id, reason };
    Ok(Json(call::<rpc::SessionClose>(&s, &req).await?))
}

#[utoipa::path(post, path = "/sessions/{id}/resume", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = SuccessResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn resume_session(State(s): State<AppState>, Path(id): Path<String>) -> Reply<SuccessResponse> {
    Ok(Json(
        call::<rpc::SessionResume>(&s, &SessionRef { session_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/sessions/{id}/archive", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = SuccessResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn archive_session(State(s): State<AppState>, Path(id): Path<String>) -> Reply<SuccessResponse> {
    Ok(Json(
        call::<rpc::SessionArchive>(&s, &SessionRef { session_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/sessions/{id}/purge", tag = "sessions", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = PurgeResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn purge_session(State(s): State<AppState>, Path(id): Path<String>) -> Reply<PurgeResponse> {
    Ok(Json(
        call::<rpc::SessionPurge>(&s, &SessionRef { session_id: id }).await?,
    ))
}

/// The body of `PATCH /sessions/{id}`: `session.update` without `sessionId`, which is the
/// path's. An explicit `null` clears `approvalPolicyOverride` or `executionTargetId`; an absent
/// key leaves it alone. (The handler reads it as the contract's `UpdateRequest`, which keeps
/// the null/absent difference; this type is its documented shape.)
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
pub struct SessionPatch {
    /// Needs an admin key; audited.
    approval_policy_override: Option<ApprovalPolicy>,
    execution_target_id: Option<String>,
    title: Option<String>,
    summary: Option<String>,
}

#[utoipa::path(patch, path = "/sessions/{id}", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body(content = SessionPatch, description = "The fields to change."), responses((status = 200, body = SuccessResponse), NotFound, Conflict, BadRequest, Unauthorized, (status = 403, description = "The key's role may not do this", body = WireError), Unavailable, Timeout))]
pub(crate) async fn update_session(
    State(s): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Reply<SuccessResponse> {
    // A PATCH without a body changes nothing by mistake: it is refused, as its schema says.
    let mut fields: serde_json::Map<String, serde_json::Value> = parse(&body)?;
    if fields.contains_key("sessionId") {
        return Err(ApiError::Invalid("sessionId comes from the path, not the body".into()));
    }
    fields.insert("sessionId".into(), id.into());
    let req: UpdateRequest = serde_json::from_value(fields.into()).map_err(|e| ApiError::Invalid(e.to_string()))?;
    Ok(Json(call::<rpc::SessionUpdate>(&s, &req).await?))
}

#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fork {
    pub from_message_id: Option<String>,
    pub name: Option<String>,
    pub branch_kind: Option<ForkKind>,
    pub target_working_directory: Option<String>,
}

#[utoipa::path(post, path = "/sessions/{id}/fork", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body(content = Option<Fork>), responses((status = 201, body = SessionIdResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn fork_session(
    State(s): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<(StatusCode, Json<SessionIdResponse>), ApiError> {
    let f: Fork = optional_body(&body)?;
    let req = ForkRequest {
        source_session_id: id,
        from_message_id: f.from_message_id,
        name: f.name,
        branch_kind: f.branch_kind,
        existing_session_id: None,
        target_working_directory: f.target_working_directory,
        transforms: None,
    };
    Ok((StatusCode::CREATED, Json(call::<rpc::SessionFork>(&s, &req).await?)))
}

// ---------------------------------------------------------------------------------------------
// Permissions and questions

/// Both lists take the same filters; only the statuses differ.
macro_rules! pending_query {
    ($name:ident, $statuses:literal) => {
        #[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
        #[into_params(parameter_in = Query)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            /// `pending` (default), a final status, or `all`.
            #[param(pattern = $statuses)]
            pub status: Option<String>,
            pub session_id: Option<String>,
            /// At most `permissions.max_list_limit` (1,000 by default).
            #[param(minimum = 1, maximum = 1000)]
            pub limit: Option<i64>,
        }

        impl $name {
            fn for_agent(self, agent: Option<String>) -> PendingListRequest {
                PendingListRequest {
                    agent_id: agent,
                    session_id: self.session_id,
                    status: self.status,
                    limit: self.limit,
                }
            }
        }
    };
}
pending_query!(PermissionsQuery, "^(pending|approved|denied|all)$");
pending_query!(QuestionsQuery, "^(pending|answered|expired|all)$");

#[utoipa::path(get, path = "/agents/{name}/permissions", tag = "permissions", params(("name" = String, Path, description = "Agent id"), PermissionsQuery), responses((status = 200, body = PermissionList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_permissions(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Query(q): Query<PermissionsQuery>,
) -> Reply<PermissionList> {
    Ok(Json(call::<rpc::PermissionList>(&s, &q.for_agent(Some(name))).await?))
}

#[utoipa::path(get, path = "/permissions", tag = "permissions", params(PermissionsQuery), responses((status = 200, description = "Every agent's permission requests in the key's workspace (the operators' inbox), newest first", body = PermissionList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn all_permissions(
    State(s): State<AppState>,
    Query(q): Query<PermissionsQuery>,
) -> Reply<PermissionList> {
    Ok(Json(call::<rpc::PermissionList>(&s, &q.for_agent(None)).await?))
}

#[utoipa::path(get, path = "/questions", tag = "questions", params(QuestionsQuery), responses((status = 200, description = "Every agent's questions in the key's workspace, newest first", body = QuestionList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn all_questions(State(s): State<AppState>, Query(q): Query<QuestionsQuery>) -> Reply<QuestionList> {
    Ok(Json(call::<rpc::QuestionList>(&s, &q.for_agent(None)).await?))
}

/// A request id under another agent's path is not found, so one agent's URL space cannot
/// decide another's requests.
pub(crate) async fn decide<R: Rpc<Request = DecideRequest, Response = DecideResponse>>(
    s: &AppState,
    name: String,
    request_id: String,
    body: &Bytes,
) -> Reply<DecideResponse> {
    auth::check_role(R::SUBJECT)?;
    let Reason { reason } = optional_body(body)?;
    let p: Permission = call::<rpc::PermissionGet>(
        s,
        &GetPermissionRequest {
            request_id: request_id.clone(),
        },
    )
    .await?;
    if p.agent_id != name {
        return Err(ApiError::NotFound(format!(
            "agent {name} has no permission request {request_id}"
        )));
    }
    Ok(Json(call::<R>(s, &DecideRequest { request_id, reason }).await?))
}

#[utoipa::path(post, path = "/agents/{name}/permissions/{request_id}/approve", tag = "permissions", params(("name" = String, Path, description = "Agent id"), ("request_id" = String, Path)), request_body(content = Option<Reason>), responses((status = 200, body = DecideResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn approve(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Path((_, id)): Path<(String, String)>,
    body: Bytes,
) -> Reply<DecideResponse> {
    decide::<rpc::PermissionApprove>(&s, name, id, &body).await
}

#[utoipa::path(post, path = "/agents/{name}/permissions/{request_id}/deny", tag = "permissions", params(("name" = String, Path, description = "Agent id"), ("request_id" = String, Path)), request_body(content = Option<Reason>), responses((status = 200, body = DecideResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn deny(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Path((_, id)): Path<(String, String)>,
    body: Bytes,
) -> Reply<DecideResponse> {
    decide::<rpc::PermissionDeny>(&s, name, id, &body).await
}

#[utoipa::path(get, path = "/agents/{name}/questions", tag = "questions", params(("name" = String, Path, description = "Agent id"), QuestionsQuery), responses((status = 200, body = QuestionList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_questions(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Query(q): Query<QuestionsQuery>,
) -> Reply<QuestionList> {
    Ok(Json(call::<rpc::QuestionList>(&s, &q.for_agent(Some(name))).await?))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    pub answer: String,
}

#[utoipa::path(post, path = "/agents/{name}/questions/{question_id}/answer", tag = "questions", params(("name" = String, Path, description = "Agent id"), ("question_id" = String, Path)), request_body = Answer, responses((status = 200, body = AnswerResponse), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn answer(
    State(s): State<AppState>,
    AgentName(name): AgentName,
    Path((_, question_id)): Path<(String, String)>,
    Json(a): Json<Answer>,
) -> Reply<AnswerResponse> {
    auth::check_role(rpc::QuestionAnswer::SUBJECT)?;
    let q: Question = call::<rpc::QuestionGet>(
        &s,
        &GetQuestionRequest {
            question_id: question_id.clone(),
        },
    )
    .await?;
    if q.agent_id != name {
        return Err(ApiError::NotFound(format!(
            "agent {name} has no question {question_id}"
        )));
    }
    let req = AnswerRequest {
        question_id,
        answer: a.answer,
    };
    Ok(Json(call::<rpc::QuestionAnswer>(&s, &req).await?))
}

// ---------------------------------------------------------------------------------------------
// Agents: the directory, and `{name}` resolved

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

// ---------------------------------------------------------------------------------------------
// Agent control

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

// ---------------------------------------------------------------------------------------------
// Deliveries, events, costs

#[utoipa::path(get, path = "/deliveries", tag = "deliveries", params(ListDeliveriesRequest), responses((status = 200, body = ListDeliveriesResponse), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_deliveries(
    State(s): State<AppState>,
    Query(q): Query<ListDeliveriesRequest>,
) -> Reply<ListDeliveriesResponse> {
    Ok(Json(call::<rpc::DeliveryList>(&s, &q).await?))
}

#[utoipa::path(get, path = "/deliveries/{id}", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), responses((status = 200, body = Delivery), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn get_delivery(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Delivery> {
    Ok(Json(
        call::<rpc::DeliveryGet>(&s, &DeliveryRef { delivery_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/deliveries/{id}/retry", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), responses((status = 200, body = Delivery), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn retry_delivery(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Delivery> {
    Ok(Json(
        call::<rpc::DeliveryRetry>(&s, &DeliveryRef { delivery_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/deliveries/{id}/cancel", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), request_body(content = Option<Reason>), responses((status = 200, body = Delivery), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn cancel_delivery(State(s): State<AppState>, Path(id): Path<String>, body: Bytes) -> Reply<Delivery> {
    let Reason { reason } = optional_body(&body)?;
    let req = CancelDeliveryRequest {
        delivery_id: id,
        reason,
    };
    Ok(Json(call::<rpc::DeliveryCancel>(&s, &req).await?))
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

#[utoipa::path(get, path = "/events", tag = "events", params(EventsQuery), responses((status = 200, body = QueryResponse), (status = 404, description = "No live agent of the workspace has this handle", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn query_events(State(s): State<AppState>, Query(q): Query<EventsQuery>) -> Reply<QueryResponse> {
    Ok(Json(crate::ops::events::query(&s, q).await?))
}

#[utoipa::path(get, path = "/costs", tag = "costs", params(ReportRequest), responses((status = 200, body = Report), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn costs(State(s): State<AppState>, Query(q): Query<ReportRequest>) -> Reply<Report> {
    Ok(Json(call::<rpc::CostReport>(&s, &q).await?))
}

#[utoipa::path(get, path = "/costs/budgets", tag = "costs", responses((status = 200, body = BudgetsResponse), Unauthorized, Unavailable, Timeout))]
pub(crate) async fn budgets(State(s): State<AppState>) -> Reply<BudgetsResponse> {
    Ok(Json(call::<rpc::CostBudgets>(&s, &BudgetsRequest {}).await?))
}

/// The agent hosts (one per agent-spawner): labels, capacity, load, status.
#[utoipa::path(get, path = "/hosts", tag = "agents", params(HostListRequest), responses((status = 200, body = HostList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn hosts(State(s): State<AppState>, Query(q): Query<HostListRequest>) -> Reply<HostList> {
    Ok(Json(call::<rpc::HostList>(&s, &q).await?))
}

/// Seed 002 `getContextWindowState`: `state` is null until the session has reported usage.
#[utoipa::path(get, path = "/sessions/{id}/context-window", tag = "costs", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = ContextWindowResponse), BadRequest, Unauthorized, (status = 404, description = "Not found (or in another workspace)", body = WireError), Unavailable, Timeout))]
pub(crate) async fn context_window(State(s): State<AppState>, Path(id): Path<String>) -> Reply<ContextWindowResponse> {
    let req = ContextWindowRequest { session_id: id };
    Ok(Json(call::<rpc::SessionGetContextWindowState>(&s, &req).await?))
}

#[utoipa::path(post, path = "/keys", tag = "keys", request_body = CreateKeyRequest, responses((status = 201, description = "The key and its token, shown this once", body = CreatedKey), BadRequest, (status = 404, description = "No such workspace", body = WireError), Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn create_key(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let req: CreateKeyRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::KeyCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/keys", tag = "keys", params(("includeRevoked" = Option<bool>, Query, description = "Revoked keys too")), responses((status = 200, body = KeyList), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn list_keys(State(s): State<AppState>, Query(q): Query<KeysQuery>) -> Reply<KeyList> {
    let req = ListKeysRequest {
        workspace: None,
        include_revoked: q.include_revoked,
    };
    Ok(Json(call::<rpc::KeyList>(&s, &req).await?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeysQuery {
    include_revoked: Option<bool>,
}

#[utoipa::path(delete, path = "/keys/{id}", tag = "keys", params(("id" = String, Path, description = "Key id")), responses((status = 200, description = "The key, revoked", body = ApiKey), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn revoke_key(State(s): State<AppState>, Path(id): Path<String>) -> Reply<ApiKey> {
    Ok(Json(call::<rpc::KeyRevoke>(&s, &KeyRef { key_id: id }).await?))
}

#[utoipa::path(post, path = "/workspaces", tag = "workspaces", request_body = CreateWorkspaceRequest, responses((status = 201, body = Workspace), BadRequest, Unauthorized, (status = 403, description = "Not an admin key of default", body = WireError), (status = 409, description = "The workspace exists", body = WireError), RateLimited, Unavailable, Timeout))]
pub(crate) async fn create_workspace(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Workspace>), ApiError> {
    let req: CreateWorkspaceRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::WorkspaceCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/workspaces", tag = "workspaces", responses((status = 200, body = WorkspaceList), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn list_workspaces(State(s): State<AppState>) -> Reply<WorkspaceList> {
    Ok(Json(call::<rpc::WorkspaceList>(&s, &ListWorkspacesRequest {}).await?))
}

#[utoipa::path(get, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), responses((status = 200, body = Workspace), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn get_workspace(State(s): State<AppState>, Path(name): Path<String>) -> Reply<Workspace> {
    Ok(Json(call::<rpc::WorkspaceGet>(&s, &WorkspaceRef { name }).await?))
}

#[utoipa::path(delete, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), responses((status = 200, description = "Deleted: its keys revoked, not found from now on", body = WorkspaceDeleted), BadRequest, NotFound, (status = 409, description = "It has live agents (stop them first), or it is `default`", body = WireError), Unauthorized, (status = 403, description = "Not an admin key of default", body = WireError), RateLimited, Unavailable, Timeout))]
pub(crate) async fn delete_workspace(State(s): State<AppState>, Path(name): Path<String>) -> Reply<WorkspaceDeleted> {
    Ok(Json(call::<rpc::WorkspaceDelete>(&s, &WorkspaceRef { name }).await?))
}

#[utoipa::path(put, path = "/workspaces/{name}/delivery-policy", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), request_body = DeliveryPolicy, responses((status = 200, description = "The workspace with its new policy; sends from now on follow it", body = Workspace), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn set_delivery_policy(
    State(s): State<AppState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Reply<Workspace> {
    let policy: DeliveryPolicy = parse(&body)?;
    let req = SetDeliveryPolicyRequest {
        name,
        delivery_policy: Some(policy),
    };
    Ok(Json(call::<rpc::WorkspaceSetDeliveryPolicy>(&s, &req).await?))
}

#[utoipa::path(get, path = "/audit", tag = "audit", params(relay_contracts::audit::ListAuditRequest), responses((status = 200, description = "`audit.recorded` events of the key's workspace, oldest first", body = QueryResponse), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn audit(
    State(s): State<AppState>,
    Query(q): Query<relay_contracts::audit::ListAuditRequest>,
) -> Reply<QueryResponse> {
    Ok(Json(call::<rpc::AuditList>(&s, &q).await?))
}
