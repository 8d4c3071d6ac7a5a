use relay_contracts::{ErrorCode, WireError};

/// Everything a prompt handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum PromptsError {
    #[error("{0}")]
    Invalid(String),
    #[error("{what} {id} not found")]
    NotFound { what: &'static str, id: String },
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

pub type Result<T> = std::result::Result<T, PromptsError>;

impl From<PromptsError> for WireError {
    fn from(e: PromptsError) -> Self {
        match e {
            PromptsError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            e @ PromptsError::NotFound { .. } => WireError::new(ErrorCode::NotFound, e.to_string()),
            PromptsError::Db(e) => relay_bus::db::wire_error(&e),
        }
    }
}
