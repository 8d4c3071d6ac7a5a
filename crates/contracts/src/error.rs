//! The one wire error: `{"error":{"code","message","retryable","details"}}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The closed set of error codes every RPC may answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// The request could not be decoded or failed validation.
    InvalidRequest,
    /// An id in the request names nothing.
    NotFound,
    /// The target exists but is in a state that forbids the operation.
    Conflict,
    /// The agent did not declare the capability the operation needs.
    CapabilityUnsupported,
    /// No credentials, or credentials that are not (or no longer) valid.
    Unauthorized,
    /// Known credentials whose role or identity may not do this.
    Forbidden,
    /// Too many requests for this key; `details.retryAfterSecs` says when to come back.
    RateLimited,
    /// A dependency (database, bus) is down; retrying later may succeed.
    Unavailable,
    Timeout,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidRequest,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::CapabilityUnsupported,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::RateLimited,
        ErrorCode::Unavailable,
        ErrorCode::Timeout,
        ErrorCode::Internal,
    ];

    /// The numeric code carried in the `Nats-Service-Error-Code` header (HTTP-like, as NATS micro expects).
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::InvalidRequest => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::RateLimited => 429,
            ErrorCode::NotFound => 404,
            ErrorCode::Conflict => 409,
            ErrorCode::CapabilityUnsupported => 422,
            ErrorCode::Internal => 500,
            ErrorCode::Unavailable => 503,
            ErrorCode::Timeout => 504,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether a caller may retry the same request unchanged.
    pub fn retryable(self) -> bool {
        matches!(self, ErrorCode::Unavailable | ErrorCode::Timeout)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// The envelope of an error reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WireError {
    pub error: ErrorBody,
}

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        WireError {
            error: ErrorBody {
                code,
                message: message.into(),
                retryable: code.retryable(),
                details: None,
            },
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.error.details = Some(details);
        self
    }

    pub fn code(&self) -> ErrorCode {
        self.error.code
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error.code, self.error.message)
    }
}

impl std::error::Error for WireError {}
