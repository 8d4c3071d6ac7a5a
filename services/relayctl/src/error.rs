//! relayctl's one error type, and its exit codes.

#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    #[error("{0}")]
    Client(#[from] relay_client::Error),
    #[error("{0}")]
    Settings(#[from] relay_bus::settings::SettingsError),
    #[error("{0}")]
    Database(#[from] relay_bus::db::DbError),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Failed(String),
}

impl CtlError {
    /// 2 for a bad command line, 3 for something that does not exist, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        use relay_contracts::ErrorCode;
        match self {
            CtlError::Invalid(_) => 2,
            CtlError::Client(e) if e.code() == Some(ErrorCode::InvalidRequest) => 2,
            CtlError::Client(e) if e.code() == Some(ErrorCode::NotFound) => 3,
            _ => 1,
        }
    }
}

pub type Result<T> = std::result::Result<T, CtlError>;

/// A contract enum from its wire spelling (`pending`, `active`, …), or a clear error.
pub fn parse<T: serde::de::DeserializeOwned>(what: &str, value: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(value.into()))
        .map_err(|_| CtlError::Invalid(format!("{what} {value:?} is not one of the known values")))
}
