use relay_contracts::{ErrorCode, WireError};

/// Everything a tenancy handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum TenancyError {
    #[error("{0}")]
    Invalid(String),
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

pub type Result<T> = std::result::Result<T, TenancyError>;

impl From<TenancyError> for WireError {
    fn from(e: TenancyError) -> Self {
        match e {
            TenancyError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ TenancyError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            TenancyError::Conflict(m) => WireError::new(ErrorCode::Conflict, m),
            TenancyError::Unauthorized(m) => WireError::new(ErrorCode::Unauthorized, m),
            TenancyError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            TenancyError::Db(e) => relay_bus::db::wire_error(&e),
        }
    }
}
