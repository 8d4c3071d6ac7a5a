//! REST for the rest of seed 002's session contract, what a session's context is made of:
//! compression (`/sessions/{id}/compress`, `/sessions/{id}/request-compression`), its system
//! prompt and the workspace's personas and profiles, the client behind it, and an agent's
//! model or working directory (a connector swap).

use crate::extract::{Json, Path, Query, Reply, parse};
use crate::ops::call;
use crate::responses::{BadRequest, NotFound, Timeout, Unauthorized, Unavailable, ViewerKey};
use crate::{ApiError, AppState};
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::prompts::*;
use relay_contracts::rpc;
use relay_contracts::session::{
    CompressRequest, CompressResponse, ObserveClientRequest, ObserveClientResponse, PipelineStep,
    RequestCompressionRequest, Source, SuccessResponse, SwapAgentRequest,
};
use serde::Deserialize;

/// `POST /sessions/{id}/compress`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Compress {
    /// 1 to 20 steps.
    #[schema(min_items = 1, max_items = 20)]
    pub pipeline: Vec<PipelineStep>,
}

#[utoipa::path(post, path = "/sessions/{id}/compress", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body = Compress, responses((status = 200, description = "Each live agent was asked to compact its context its CLI's way (/compact, /compress); session.compressed and session.squash are in the log", body = CompressResponse), NotFound, (status = 409, description = "The session is not active", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn compress(
    State(s): State<AppState>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Reply<CompressResponse> {
    let Compress { pipeline } = parse(&body)?;
    let req = CompressRequest { session_id, pipeline };
    Ok(Json(call::<rpc::SessionCompress>(&s, &req).await?))
}

/// `POST /sessions/{id}/request-compression`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskCompression {
    #[schema(min_length = 1, max_length = 1000, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub reason: String,
    pub source: Option<Source>,
    pub extension_id: Option<String>,
}

#[utoipa::path(post, path = "/sessions/{id}/request-compression", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body = AskCompression, responses((status = 200, description = "session.compressionRequested is in the log", body = SuccessResponse), NotFound, (status = 409, description = "The session was purged", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn request_compression(
    State(s): State<AppState>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Reply<SuccessResponse> {
    let AskCompression {
        reason,
        source,
        extension_id,
    } = parse(&body)?;
    let req = RequestCompressionRequest {
        session_id,
        reason,
        source,
        extension_id,
    };
    Ok(Json(call::<rpc::SessionRequestCompression>(&s, &req).await?))
}

/// `GET /sessions/{id}/system-prompt`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptQuery {
    /// Else the lead agent's persona.
    #[param(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    pub persona_id: Option<String>,
    /// Else the lead agent's profile.
    #[param(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")]
    pub profile_id: Option<String>,
}

#[utoipa::path(get, path = "/sessions/{id}/system-prompt", tag = "sessions", params(("id" = String, Path, description = "Session id"), PromptQuery), responses((status = 200, description = "The profile's prompt, then the persona's", body = ResolveSystemPromptResponse), (status = 404, description = "No such session, or no such persona or profile named in the query", body = WireError), (status = 409, description = "The session was purged", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn system_prompt(
    State(s): State<AppState>,
    Path(session_id): Path<String>,
    Query(q): Query<PromptQuery>,
) -> Reply<ResolveSystemPromptResponse> {
    let req = ResolveSystemPromptRequest {
        session_id,
        persona_id: q.persona_id,
        profile_id: q.profile_id,
    };
    Ok(Json(call::<rpc::SessionResolveSystemPrompt>(&s, &req).await?))
}

/// `PUT /personas/{id}`, `PUT /profiles/{id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptBody {
    #[schema(min_length = 1, max_length = 200, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub name: String,
    #[schema(max_length = 100000, pattern = "^[^\\u0000]*$")]
    pub system_prompt: String,
}

async fn put(s: &AppState, kind: PromptKind, id: String, body: &Bytes) -> Result<Prompt, ApiError> {
    let PromptBody { name, system_prompt } = parse(body)?;
    let req = PutPromptRequest {
        kind,
        id,
        name,
        system_prompt,
    };
    call::<rpc::PromptPut>(s, &req).await
}

async fn list(s: &AppState, kind: PromptKind) -> Result<PromptList, ApiError> {
    call::<rpc::PromptList>(s, &ListPromptsRequest { kind: Some(kind) }).await
}

macro_rules! prompt_routes {
    ($kind:expr, $base:literal, $tag:literal, $what:literal, $put:ident, $list:ident, $get:ident, $delete:ident) => {
        #[utoipa::path(put, path = concat!($base, "/{id}"), tag = "prompts", params(("id" = String, Path, description = concat!($what, " id"), max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), request_body = PromptBody, responses((status = 200, description = concat!("The ", $what, ", created or replaced"), body = Prompt), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
        pub async fn $put(State(s): State<AppState>, Path(id): Path<String>, body: Bytes) -> Reply<Prompt> {
            Ok(Json(put(&s, $kind, id, &body).await?))
        }

        #[utoipa::path(get, path = $base, tag = "prompts", responses((status = 200, description = concat!("The workspace's ", $what, "s"), body = PromptList), Unauthorized, Unavailable, Timeout))]
        pub async fn $list(State(s): State<AppState>) -> Reply<PromptList> {
            Ok(Json(list(&s, $kind).await?))
        }

        #[utoipa::path(get, path = concat!($base, "/{id}"), tag = "prompts", params(("id" = String, Path, description = concat!($what, " id"), max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = Prompt), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
        pub async fn $get(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Prompt> {
            Ok(Json(call::<rpc::PromptGet>(&s, &PromptRef { kind: $kind, id }).await?))
        }

        #[utoipa::path(delete, path = concat!($base, "/{id}"), tag = "prompts", params(("id" = String, Path, description = concat!($what, " id"), max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = PromptDeleted), NotFound, BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
        pub async fn $delete(State(s): State<AppState>, Path(id): Path<String>) -> Reply<PromptDeleted> {
            Ok(Json(call::<rpc::PromptDelete>(&s, &PromptRef { kind: $kind, id }).await?))
        }
    };
}

prompt_routes!(
    PromptKind::Persona,
    "/personas",
    "prompts",
    "persona",
    put_persona,
    list_personas,
    get_persona,
    delete_persona
);
prompt_routes!(
    PromptKind::Profile,
    "/profiles",
    "prompts",
    "profile",
    put_profile,
    list_profiles,
    get_profile,
    delete_profile
);

/// `POST /sessions/{id}/client`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClientObservation {
    #[schema(min_length = 1, max_length = 256, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub client_id: String,
    #[schema(min_length = 1, max_length = 256, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub client_account_id: String,
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub kind: String,
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub source: String,
    #[schema(value_type = Option<Object>)]
    pub payload: Option<serde_json::Map<String, serde_json::Value>>,
}

#[utoipa::path(post, path = "/sessions/{id}/client", tag = "sessions", params(("id" = String, Path, description = "Session id")), request_body = ClientObservation, responses((status = 200, description = "Recorded; `changed` when the canonical account differs from the last one (session.clientAccount.changed)", body = ObserveClientResponse), NotFound, (status = 409, description = "The session was purged", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn observe_client(
    State(s): State<AppState>,
    Path(session_id): Path<String>,
    body: Bytes,
) -> Reply<ObserveClientResponse> {
    let o: ClientObservation = parse(&body)?;
    let req = ObserveClientRequest {
        session_id,
        client_id: o.client_id,
        client_account_id: o.client_account_id,
        kind: o.kind,
        source: o.source,
        payload: o.payload,
    };
    Ok(Json(call::<rpc::SessionObserveClient>(&s, &req).await?))
}

/// `POST /sessions/{id}/agents/{agentId}/swap`: what changes.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Swap {
    #[schema(min_length = 1, max_length = 256, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub model: Option<String>,
    #[schema(min_length = 1, max_length = 4096, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")]
    pub cwd: Option<String>,
}

#[utoipa::path(post, path = "/sessions/{id}/agents/{agentId}/swap", tag = "sessions", params(("id" = String, Path, description = "Session id"), ("agentId" = String, Path, description = "Agent id")), request_body = Swap, responses((status = 200, description = "Changed (session.connectorSwap.editRequested), or already so", body = SuccessResponse), (status = 404, description = "No such session or agent", body = WireError), (status = 409, description = "The session was purged", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn swap_agent(
    State(s): State<AppState>,
    Path((session_id, agent_id)): Path<(String, String)>,
    body: Bytes,
) -> Reply<SuccessResponse> {
    let Swap { model, cwd } = parse(&body)?;
    let req = SwapAgentRequest {
        session_id,
        agent_id,
        model,
        cwd,
    };
    Ok(Json(call::<rpc::SessionAgentSwap>(&s, &req).await?))
}
