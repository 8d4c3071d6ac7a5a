//! The extractors every HTTP surface uses: bodies, queries and paths whose every failure is
//! our JSON error, and an agent's name in a path.

use crate::ops::call;
use crate::{ApiError, AppState};
use axum::extract::{FromRequest, FromRequestParts};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use relay_contracts::rpc;
use relay_contracts::session::{AgentGetRequest, handle_of};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A JSON body; any failure is our JSON error (400, or 413 over the body limit).
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let body = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge
            } else {
                ApiError::Invalid(e.body_text())
            }
        })?;
        parse(&body).map(Json)
    }
}

/// Decodes a body, refusing NUL in strings: Postgres cannot store it, and the services behind
/// would answer `internal` instead of saying what is wrong.
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if has_nul_escape(body) {
        return Err(ApiError::Invalid("strings may not contain NUL (\\u0000)".into()));
    }
    // serde reads a struct from an array too (`[null]` as `{reason: null}`); every body is an object.
    if body.trim_ascii_start().first() == Some(&b'[') {
        return Err(ApiError::Invalid("the body must be a JSON object, not an array".into()));
    }
    serde_json::from_slice(body).map_err(|e| ApiError::Invalid(format!("invalid JSON body: {e}")))
}

/// Whether JSON text holds a `\u0000` escape (an odd run of backslashes before `u0000`).
fn has_nul_escape(body: &[u8]) -> bool {
    body.windows(5)
        .enumerate()
        .any(|(i, w)| w == b"u0000" && body[..i].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 1)
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        axum::Json(self.0).into_response()
    }
}

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct Query<T>(pub T);

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

pub(crate) type Reply<T> = Result<Json<T>, ApiError>;

/// A body that may be left out entirely (`POST …/approve` with no reason).
/// The one rule: no bytes, only whitespace, or the JSON `null` is no body; anything else must
/// be the JSON object.
pub(crate) fn optional_body<T: DeserializeOwned + Default>(body: &Bytes) -> Result<T, ApiError> {
    if body.trim_ascii().is_empty() || body.trim_ascii() == b"null" {
        return Ok(T::default());
    }
    parse(body)
}

/// The `{name}` of an agent route as an agent id: a handle (`@bob` or `bob`, a live agent of
/// the caller's workspace) or an agent id. Handles are shorter than the ids the mesh makes, so
/// a name is never both; a short name that is no handle is taken as an id, as before handles.
pub struct AgentName(pub String);

impl axum::extract::FromRequestParts<AppState> for AgentName {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, s: &AppState) -> Result<Self, ApiError> {
        let Path(params) = Path::<std::collections::HashMap<String, String>>::from_request_parts(parts, s).await?;
        let name = params.get("name").cloned().unwrap_or_default();
        if handle_of(&name).is_none() {
            return Ok(AgentName(name));
        }
        match call::<rpc::AgentGet>(s, &AgentGetRequest { agent: name.clone() }).await {
            Ok(agent) => Ok(AgentName(agent.agent_id)),
            Err(e) if !name.starts_with('@') && e.is_not_found() => Ok(AgentName(name)),
            Err(e) => Err(e),
        }
    }
}
