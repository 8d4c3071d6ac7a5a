//! `/agents/{name}/permissions` and `/agents/{name}/questions`, the inbox across agents
//! (`/permissions`, `/questions`): list, approve, deny, answer.

use crate::extract::{AgentName, Json, Path, Query, Reply, optional_body};
use crate::ops::call;
use crate::responses::{BadRequest, Conflict, NotFound, Timeout, Unauthorized, Unavailable};
use crate::rest::Reason;
use crate::{ApiError, AppState, auth};
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::permission::{
    AnswerRequest, AnswerResponse, DecideRequest, DecideResponse, GetPermissionRequest, GetQuestionRequest,
    ListRequest as PendingListRequest, Permission, PermissionList, Question, QuestionList,
};
use relay_contracts::{Rpc, rpc};
use serde::Deserialize;

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
