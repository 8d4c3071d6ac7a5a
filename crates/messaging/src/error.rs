use relay_contracts::{ErrorCode, WireError};
use serde_json::json;

/// Everything a messaging handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum MessagingError {
    #[error("{0}")]
    Invalid(String),
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
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
    /// The host refused (its send path, its sessions): passed on as it answered.
    #[error("{0}")]
    Host(WireError),
}

pub type Result<T> = std::result::Result<T, MessagingError>;

impl MessagingError {
    pub fn agent_not_found(id: &str) -> Self {
        MessagingError::NotFound {
            what: "agent",
            id: id.to_string(),
        }
    }
}

impl From<MessagingError> for WireError {
    fn from(e: MessagingError) -> Self {
        match e {
            MessagingError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ MessagingError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            MessagingError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            MessagingError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            MessagingError::Unavailable(m) => WireError::new(ErrorCode::Unavailable, m),
            MessagingError::Capability {
                ref agent_id,
                ref capability,
                ..
            } => {
                let details = json!({ "agentId": agent_id, "capability": capability });
                WireError::new(ErrorCode::CapabilityUnsupported, e.to_string()).with_details(details)
            }
            MessagingError::Db(e) => relay_bus::db::wire_error_or_conflict(&e),
            MessagingError::Host(e) => e,
        }
    }
}
