//! Optional bearer auth for `/api/v1` (seed 003 §2.5). The configured token is kept only as a
//! SHA-256 digest and compared in constant time, so response timing says nothing about it.

use crate::{ApiError, AppState};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::{Caller, RequestContext};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

#[derive(Clone)]
pub struct Token([u8; 32]);

impl Token {
    pub fn new(token: &str) -> Token {
        Token(Sha256::digest(token.as_bytes()).into())
    }

    fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.0.ct_eq(&digest).into()
    }
}

/// Who is calling, when no token is configured or the `Authorization: Bearer` header carries
/// it; `None` otherwise. The gRPC bridge asks the same question of its metadata (which is
/// HTTP/2 headers). With one shared token every caller is the operator `bearer` (`open` when
/// no token is configured); scoped keys will name their own.
pub fn caller(state: &AppState, headers: &HeaderMap) -> Option<RequestContext> {
    let operator = |id: &str| Some(RequestContext::new(Caller::Operator(id.into()), DEFAULT_WORKSPACE));
    let Some(token) = &state.auth else {
        return operator("open");
    };
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .is_some_and(|presented| token.matches(presented.trim()))
        .then(|| operator("bearer"))
        .flatten()
}

/// Lets an authorised request through, its bus calls made as its caller; 401 with
/// `WWW-Authenticate` otherwise.
pub async fn require_bearer(State(state): State<AppState>, request: Request, next: Next) -> Response {
    match caller(&state, request.headers()) {
        Some(ctx) => relay_bus::context::act_as(ctx, next.run(request)).await,
        None => ApiError::Unauthorized.into_response(),
    }
}
