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
    #[error("request body too large (gateway.body_limit_bytes)")]
    TooLarge,
    /// Over a capacity limit (SSE connections); the client should come back later.
    #[error("{0}")]
    Busy(String),
}

impl ApiError {
    fn code(&self) -> ErrorCode {
        match self {
            ApiError::Bus(e) => e.code(),
            ApiError::Invalid(_) | ApiError::TooLarge => ErrorCode::InvalidRequest,
            ApiError::NotFound(_) => ErrorCode::NotFound,
            ApiError::Unauthorized => ErrorCode::Unauthorized,
            ApiError::Busy(_) => ErrorCode::Unavailable,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.code();
        let status = match self {
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::from_u16(code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        };
        let body = match self {
            ApiError::Bus(e) => e,
            other => WireError::new(code, other.to_string()),
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
