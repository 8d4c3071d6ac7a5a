//! The delivery runner's one error type, mapped once to the wire error.

use relay_contracts::{ErrorCode, WireError};

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    /// The caller may not act on this agent (a harness stopping one it did not spawn).
    #[error("{0}")]
    Forbidden(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// A harness or another service refused or could not be reached; passed on as it came.
    #[error("{0}")]
    Upstream(WireError),
}

pub type Result<T> = std::result::Result<T, DeliveryError>;

impl From<DeliveryError> for WireError {
    fn from(e: DeliveryError) -> Self {
        match e {
            DeliveryError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ DeliveryError::NotFound(_) => WireError::new(ErrorCode::NotFound, e.to_string()),
            DeliveryError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            DeliveryError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            DeliveryError::Db(e) => relay_bus::db::wire_error(&e),
            DeliveryError::Upstream(e) => e,
        }
    }
}
