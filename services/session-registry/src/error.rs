use relay_contracts::{ErrorCode, WireError};
use serde_json::json;

/// Everything a registry handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
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
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    /// A limit is reached for now: try again later.
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
    /// Another service refused or could not be reached; passed on as it came.
    #[error("{0}")]
    Upstream(WireError),
}

pub type Result<T> = std::result::Result<T, RegistryError>;

impl RegistryError {
    pub fn session_not_found(id: &str) -> Self {
        RegistryError::NotFound {
            what: "session",
            id: id.to_string(),
        }
    }

    pub fn agent_not_found(id: &str) -> Self {
        RegistryError::NotFound {
            what: "agent",
            id: id.to_string(),
        }
    }
}

impl From<RegistryError> for WireError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            RegistryError::InvalidWith { message, details } => {
                WireError::new(ErrorCode::InvalidRequest, message).with_details(details)
            }
            e @ RegistryError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            RegistryError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            RegistryError::Unauthorized(m) => WireError::new(ErrorCode::Unauthorized, m),
            RegistryError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            RegistryError::Unavailable(m) => WireError::new(ErrorCode::Unavailable, m),
            RegistryError::Capability {
                ref agent_id,
                ref capability,
                ..
            } => {
                let details = json!({ "agentId": agent_id, "capability": capability });
                WireError::new(ErrorCode::CapabilityUnsupported, e.to_string()).with_details(details)
            }
            RegistryError::Db(e) => relay_bus::db::wire_error_or_conflict(&e),
            RegistryError::Upstream(e) => e,
        }
    }
}
