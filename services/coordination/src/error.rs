use relay_contracts::{ErrorCode, WireError};
use serde_json::json;

/// Everything a coordination handler or loop can fail with; mapped once onto the wire below.
#[derive(Debug, thiserror::Error)]
pub enum CoordinationError {
    #[error("{0}")]
    Invalid(String),
    #[error("{message}")]
    InvalidWith {
        message: String,
        details: serde_json::Value,
    },
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Forbidden(String),
    /// Another service cannot decide now: try again later.
    #[error("{0}")]
    Unavailable(String),
    #[error("agent {agent_id} does not support {capability}: {reason}")]
    Capability {
        agent_id: String,
        capability: String,
        reason: String,
    },
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// Another service (the registry, the permission manager) refused or could not be
    /// reached; passed on as it came.
    #[error("{0}")]
    Upstream(WireError),
}

pub type Result<T> = std::result::Result<T, CoordinationError>;

impl From<WireError> for CoordinationError {
    fn from(e: WireError) -> Self {
        CoordinationError::Upstream(e)
    }
}

impl From<CoordinationError> for WireError {
    fn from(e: CoordinationError) -> Self {
        match e {
            CoordinationError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            CoordinationError::InvalidWith { message, details } => {
                WireError::new(ErrorCode::InvalidRequest, message).with_details(details)
            }
            e @ CoordinationError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            CoordinationError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            CoordinationError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            CoordinationError::Unavailable(m) => WireError::new(ErrorCode::Unavailable, m),
            CoordinationError::Capability {
                ref agent_id,
                ref capability,
                ..
            } => {
                let details = json!({ "agentId": agent_id, "capability": capability });
                WireError::new(ErrorCode::CapabilityUnsupported, e.to_string()).with_details(details)
            }
            CoordinationError::Db(e) => relay_bus::db::wire_error(&e),
            CoordinationError::Upstream(e) => e,
        }
    }
}
