use relay_contracts::{ErrorCode, WireError};

/// Everything a host handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    #[error("{0}")]
    Invalid(String),
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    /// No host can take it now: try again later.
    #[error("{0}")]
    Unavailable(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A spawner refused or could not be reached, or the service that keeps the agents
    /// refused: passed on as it answered.
    #[error("{0}")]
    Upstream(WireError),
}

pub type Result<T> = std::result::Result<T, HostsError>;

impl From<HostsError> for WireError {
    fn from(e: HostsError) -> Self {
        match e {
            HostsError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ HostsError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            HostsError::Unavailable(m) => WireError::new(ErrorCode::Unavailable, m),
            HostsError::Db(e) => relay_bus::db::wire_error_or_conflict(&e),
            HostsError::Upstream(e) => e,
        }
    }
}
