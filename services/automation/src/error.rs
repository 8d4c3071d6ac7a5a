use relay_contracts::{ErrorCode, WireError};

/// Everything an automation handler or loop can fail with; mapped once onto the wire.
#[derive(Debug, thiserror::Error)]
pub enum AutomationError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// Another service (the event log, the registry) answered with an error.
    #[error("{0}")]
    Upstream(WireError),
}

impl From<relay_bus::follow::FollowError> for AutomationError {
    fn from(e: relay_bus::follow::FollowError) -> Self {
        match e {
            relay_bus::follow::FollowError::Db(e) => AutomationError::Db(e),
            relay_bus::follow::FollowError::Log(e) => AutomationError::Upstream(e),
        }
    }
}

pub type Result<T> = std::result::Result<T, AutomationError>;

impl From<AutomationError> for WireError {
    fn from(e: AutomationError) -> Self {
        match e {
            AutomationError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            AutomationError::NotFound(m) => WireError::new(ErrorCode::NotFound, m),
            AutomationError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            AutomationError::Db(e) => relay_bus::db::wire_error(&e),
            AutomationError::Upstream(e) => e,
        }
    }
}
