use relay_contracts::{ErrorCode, WireError};

/// Everything an ingest handler can fail with; mapped once onto the wire error below.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("{0}")]
    Invalid(String),
    #[error("{message}")]
    InvalidEvents {
        message: String,
        details: serde_json::Value,
    },
    /// A harness appending for an agent that is not its own; a caller appending a type only
    /// services write.
    #[error("{0}")]
    Forbidden(String),
    /// A session or agent the caller cannot see, named by an event it appends.
    #[error("{0}")]
    NotFound(String),
    /// The registry, asked whose session or agent an event names, did not answer.
    #[error(transparent)]
    Upstream(WireError),
    #[error("the writer stopped; retry")]
    WriterGone,
    /// The transaction holding this request failed; nothing of it was stored. The cause is
    /// logged, not sent: it may hold other callers' data.
    #[error("append not committed; nothing was stored")]
    CommitFailed { retryable: bool },
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
}

pub type Result<T> = std::result::Result<T, IngestError>;

impl IngestError {
    /// Whether the same request may succeed later (the database was down or busy).
    pub fn is_transient(&self) -> bool {
        matches!(self, IngestError::Db(e) if relay_bus::db::is_transient(e))
    }
}

impl From<IngestError> for WireError {
    fn from(e: IngestError) -> Self {
        match e {
            IngestError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            IngestError::InvalidEvents { message, details } => {
                WireError::new(ErrorCode::InvalidRequest, message).with_details(details)
            }
            IngestError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            IngestError::NotFound(m) => WireError::new(ErrorCode::NotFound, m),
            IngestError::Upstream(e) => e,
            IngestError::WriterGone => WireError::new(ErrorCode::Unavailable, e.to_string()),
            IngestError::CommitFailed { retryable: true, .. } => WireError::new(ErrorCode::Unavailable, e.to_string()),
            IngestError::CommitFailed { retryable: false, .. } => WireError::new(ErrorCode::Internal, e.to_string()),
            IngestError::Db(e) => relay_bus::db::wire_error(&e),
        }
    }
}
