use relay_contracts::{ErrorCode, WireError};

/// Everything a cost-aggregator handler or the fold can fail with; mapped once onto the wire.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error("{0}")]
    Invalid(String),
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// The event log could not be read.
    #[error("event log: {0}")]
    Upstream(WireError),
}

impl From<relay_bus::follow::FollowError> for CostError {
    fn from(e: relay_bus::follow::FollowError) -> Self {
        match e {
            relay_bus::follow::FollowError::Db(e) => CostError::Db(e),
            relay_bus::follow::FollowError::Log(e) => CostError::Upstream(e),
        }
    }
}

pub type Result<T> = std::result::Result<T, CostError>;

impl From<CostError> for WireError {
    fn from(e: CostError) -> Self {
        match e {
            CostError::Invalid(m) => WireError::new(ErrorCode::InvalidRequest, m),
            CostError::Db(e) => relay_bus::db::wire_error(&e),
            CostError::Upstream(e) => e,
        }
    }
}
