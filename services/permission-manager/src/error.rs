use relay_contracts::{ErrorCode, WireError};

/// Everything a permission-manager handler can fail with; mapped once onto the wire error.
#[derive(Debug, thiserror::Error)]
pub enum PermissionError {
    #[error("{0}")]
    Invalid(String),
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

pub type Result<T> = std::result::Result<T, PermissionError>;

impl From<PermissionError> for WireError {
    fn from(e: PermissionError) -> Self {
        match e {
            PermissionError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ PermissionError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            PermissionError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            PermissionError::Db(e) => relay_bus::db::wire_error(&e),
        }
    }
}
