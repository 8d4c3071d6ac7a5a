//! `/sessions`: create, list, search, count, get, end, send, close, resume, archive, purge,
//! update, fork. Creating and sending are [`crate::ops::sessions`], which the MCP tools call too.

use crate::extract::{Json, Path, Query, Reply, optional_body, parse};
use crate::ops::sessions::{CreateSession, Created, SendMessage, Sent};
use crate::ops::{call, find_session};
use crate::responses::{BadRequest, Conflict, NotFound, Timeout, Unauthorized, Unavailable};
use crate::rest::Reason;
use crate::{ApiError, AppState, auth};
use axum::extract::State;
use axum::http::StatusCode;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::delivery::StopAgentRequest;
use relay_contracts::session::{
    ApprovalPolicy, CloseRequest, ForkKind, ForkRequest, ListRequest, ListResponse, MessagesRequest, MessagesResponse,
    PurgeResponse, Session, SessionIdResponse, SessionRef, SuccessResponse, UpdateRequest,
};
use relay_contracts::{Rpc, rpc};
use serde::{Deserialize, Serialize};

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
