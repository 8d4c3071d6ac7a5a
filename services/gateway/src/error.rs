//! The gateway's one error type, mapped once to HTTP: the bus error code picks the status and
//! the body is the same `{"error":{code,message,retryable}}` envelope the bus uses.

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
        let code = self.code();
        let retry_after = match &self {
            ApiError::RateLimited { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        };
        let status = match self {
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        };
        let body = match self {
            ApiError::Bus(e) => e,
            other => WireError::new(code, other.to_string()),
        };
        let body = match retry_after {
            Some(secs) => body.with_details(serde_json::json!({ "retryAfterSecs": secs })),
            None => body,
        };
        let mut response = (status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
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
                let secs = retry_after.unwrap_or(1).to_string();
                if let Ok(v) = HeaderValue::from_str(&secs) {
                    headers.insert(header::RETRY_AFTER, v);
                }
            }
            _ => {}
        }
        response
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
