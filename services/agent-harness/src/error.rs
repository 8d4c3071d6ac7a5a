//! The harness's and the spawner's one error type, mapped once to the wire.

use relay_contracts::{ErrorCode, WireError};

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("patterns: {0}")]
    Patterns(String),
    #[error("cannot start the command: {0}")]
    Spawn(#[from] std::io::Error),
    #[error("{0}")]
    Bus(#[from] relay_contracts::WireError),
    /// `agent.spawn` asked for something this spawner cannot do (a bad cwd).
    #[error("{0}")]
    Invalid(String),
    /// `agent.spawn` named a cli this spawner has no command for.
    #[error("{0}")]
    UnknownCli(String),
    /// The spawner is running as many agents as it may.
    #[error("{0}")]
    Busy(String),
    /// The agent's harness did not come up or did not attach.
    #[error("{0}")]
    NotStarted(String),
    /// A harness asked for what its agent may not do (spawn without delegating).
    #[error("{0}")]
    Forbidden(String),
}

impl From<HarnessError> for WireError {
    fn from(e: HarnessError) -> Self {
        match e {
            HarnessError::Bus(w) => w,
            HarnessError::Invalid(m) | HarnessError::Patterns(m) => WireError::new(ErrorCode::InvalidRequest, m),
            HarnessError::UnknownCli(m) => WireError::new(ErrorCode::NotFound, m),
            HarnessError::Busy(m) | HarnessError::NotStarted(m) => WireError::new(ErrorCode::Unavailable, m),
            HarnessError::Forbidden(m) => WireError::new(ErrorCode::Forbidden, m),
            e @ HarnessError::Spawn(_) => WireError::new(ErrorCode::Internal, e.to_string()),
        }
    }
}
