//! The gateway's one error type, and the one table ([`row`]) that says how each error code reads
//! on every surface: REST and AG-UI (HTTP status, the `{"error":{code,message,retryable}}`
//! envelope the bus uses), gRPC (status code, the wire code as `relay-error-code` metadata), A2A
//! (JSON-RPC code, and the HTTP status where the refusal is about the call itself) and MCP (a
//! tool error whose structured content is the same envelope). No surface maps a code itself.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use relay_contracts::{ErrorCode, WireError};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A service answered with an error, or could not be reached (`unavailable`, `timeout`).
    #[error(transparent)]
    Bus(#[from] WireError),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("a valid bearer token is required")]
    Unauthorized,
    /// The caller's key role may not do this.
    #[error("{0}")]
    Forbidden(String),
    #[error("too many requests for this key; retry after {retry_after_secs} s")]
    RateLimited { retry_after_secs: u64 },
    #[error("request body too large (gateway.body_limit_bytes)")]
    TooLarge,
    /// Over a capacity limit (SSE connections); the client should come back later.
    #[error("{0}")]
    Busy(String),
}

impl ApiError {
    pub fn is_not_found(&self) -> bool {
        self.code() == ErrorCode::NotFound
    }

    /// `<code>: <message>`, for protocols that carry an error as text (MCP tool errors, A2A
    /// JSON-RPC messages). A service's error already reads so.
    pub fn with_code(&self) -> String {
        match self {
            ApiError::Bus(e) => e.to_string(),
            other => format!("{}: {other}", other.code().as_str()),
        }
    }

    /// How this error reads on every surface: its code's row, but for the two limits that
    /// gRPC calls RESOURCE_EXHAUSTED (a body too large, HTTP 413; too many open streams).
    pub fn row(&self) -> Row {
        let row = row(self.code());
        match self {
            ApiError::TooLarge => Row {
                http: StatusCode::PAYLOAD_TOO_LARGE,
                grpc: tonic::Code::ResourceExhausted,
                ..row
            },
            ApiError::Busy(_) => Row {
                grpc: tonic::Code::ResourceExhausted,
                ..row
            },
            _ => row,
        }
    }

    /// The error as the bus envelope (`{"error":{code,message,retryable,details?}}`).
    pub fn wire(&self) -> WireError {
        match self {
            ApiError::Bus(e) => e.clone(),
            ApiError::RateLimited { retry_after_secs } => WireError::new(self.code(), self.to_string())
                .with_details(serde_json::json!({ "retryAfterSecs": retry_after_secs })),
            other => WireError::new(other.code(), other.to_string()),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Bus(e) => e.code(),
            ApiError::Invalid(_) | ApiError::TooLarge => ErrorCode::InvalidRequest,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::Forbidden(_) => ErrorCode::Forbidden,
            ApiError::RateLimited { .. } => ErrorCode::RateLimited,
            ApiError::Busy(_) => ErrorCode::Unavailable,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.row().http;
        let body = self.wire();
        let mut response = (status, axum::Json(&body)).into_response();
        http_headers(status, &body, response.headers_mut());
        response
    }
}

/// The headers an HTTP error answer carries with its status: who may call (401), when to come
/// back (429 from the key's limit, 503).
pub fn http_headers(status: StatusCode, error: &WireError, headers: &mut axum::http::HeaderMap) {
    match status {
        StatusCode::UNAUTHORIZED => {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"relay-mesh\""),
            );
        }
        StatusCode::SERVICE_UNAVAILABLE => {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        StatusCode::TOO_MANY_REQUESTS => {
            let secs = error
                .error
                .details
                .as_ref()
                .and_then(|d| d.get("retryAfterSecs"))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1)
                .to_string();
            if let Ok(v) = HeaderValue::from_str(&secs) {
                headers.insert(header::RETRY_AFTER, v);
            }
        }
        _ => {}
    }
}

/// One row of the error table: how a code reads on each surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// REST, AG-UI, and what a JSON-RPC answer (A2A) is sent with when `jsonrpc_http`.
    pub http: StatusCode,
    pub grpc: tonic::Code,
    /// The JSON-RPC error code (A2A): the JSON-RPC and A2A spec's own where one fits, else
    /// relay-mesh's, from the implementation-defined server range.
    pub jsonrpc: i64,
    /// Whether a JSON-RPC answer carries `http` as its status: a refusal of the call itself
    /// (who calls, how often, whether the mesh is up), which HTTP clients act on, rather than of
    /// what it asks (answered 200 with the JSON-RPC error, as JSON-RPC over HTTP does).
    pub jsonrpc_http: bool,
}

/// relay-mesh's own JSON-RPC codes (for codes neither JSON-RPC nor A2A names), clear of A2A's
/// -32001…-32009.
pub mod jsonrpc {
    pub const CONFLICT: i64 = -32050;
    pub const UNAUTHORIZED: i64 = -32051;
    pub const FORBIDDEN: i64 = -32052;
    pub const RATE_LIMITED: i64 = -32053;
    pub const UNAVAILABLE: i64 = -32054;
    pub const TIMEOUT: i64 = -32055;
    /// JSON-RPC's own.
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    /// A2A's `TaskNotFoundError` (its only not-found) and `UnsupportedOperationError`.
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
}

/// The error table (docs/reference/subjects.md, "Error codes"). The HTTP status is the code's own
/// ([`ErrorCode::status`], what the bus's service-error header says too).
pub fn row(code: ErrorCode) -> Row {
    use tonic::Code as G;
    let (grpc, jsonrpc, jsonrpc_http) = match code {
        ErrorCode::InvalidRequest => (G::InvalidArgument, jsonrpc::INVALID_PARAMS, false),
        ErrorCode::NotFound => (G::NotFound, jsonrpc::TASK_NOT_FOUND, false),
        ErrorCode::Conflict => (G::FailedPrecondition, jsonrpc::CONFLICT, false),
        ErrorCode::CapabilityUnsupported => (G::FailedPrecondition, jsonrpc::UNSUPPORTED_OPERATION, false),
        ErrorCode::Unauthorized => (G::Unauthenticated, jsonrpc::UNAUTHORIZED, true),
        ErrorCode::Forbidden => (G::PermissionDenied, jsonrpc::FORBIDDEN, true),
        ErrorCode::RateLimited => (G::ResourceExhausted, jsonrpc::RATE_LIMITED, true),
        ErrorCode::Unavailable => (G::Unavailable, jsonrpc::UNAVAILABLE, true),
        ErrorCode::Timeout => (G::DeadlineExceeded, jsonrpc::TIMEOUT, true),
        ErrorCode::Internal => (G::Internal, jsonrpc::INTERNAL, false),
    };
    Row {
        http: StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        grpc,
        jsonrpc,
        jsonrpc_http,
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge,
            other => ApiError::Invalid(other.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::Invalid(r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::Invalid(r.body_text())
    }
}

/// Every error the gateway answers is the one JSON envelope, including the ones axum makes
/// before a handler runs (a body over the limit: 413, a wrong method: 405, an extractor's
/// plain-text rejection): they keep their status and get `{"error": {...}}` as the body.
pub async fn json_errors(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json_or_grpc = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json") || t.starts_with("application/grpc"));
    if !(status.is_client_error() || status.is_server_error()) || is_json_or_grpc {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let (code, message) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (ErrorCode::InvalidRequest, ApiError::TooLarge.to_string()),
        StatusCode::METHOD_NOT_ALLOWED => (ErrorCode::InvalidRequest, "method not allowed on this route".into()),
        StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such route".into()),
        s if s.is_server_error() => (ErrorCode::Internal, text),
        _ => (ErrorCode::InvalidRequest, text),
    };
    let body = serde_json::to_vec(&WireError::new(code, message)).unwrap_or_default();
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_own_jsonrpc_code_and_a_grpc_code_other_than_ok_or_unknown() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let r = row(code);
            assert_eq!(r.http.as_u16(), code.status(), "{code:?}");
            assert!(!matches!(r.grpc, tonic::Code::Ok | tonic::Code::Unknown), "{code:?}");
            assert!(seen.insert(r.jsonrpc), "{code:?} shares JSON-RPC code {}", r.jsonrpc);
        }
    }
}
