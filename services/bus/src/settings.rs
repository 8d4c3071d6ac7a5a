//! Layered configuration: built-in defaults, then a TOML file, then `RELAY_*` environment
//! variables (`RELAY_NATS__URL`, `RELAY_DATABASE__URL`, …; `__` separates sections).

use serde::{Deserialize, Serialize, de::DeserializeOwned};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct NatsSettings {
    pub url: String,
    /// How many times to try the first connection (500 ms apart) before giving up.
    pub connect_attempts: u32,
    /// Timeout of requests this service makes to others.
    pub request_timeout_ms: u64,
}

impl Default for NatsSettings {
    fn default() -> Self {
        NatsSettings {
            url: "nats://127.0.0.1:4222".into(),
            connect_attempts: 120,
            request_timeout_ms: 5_000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct DatabaseSettings {
    pub url: String,
    pub max_connections: u32,
    /// How many times to try the first connection (500 ms apart) before giving up.
    pub connect_attempts: u32,
    /// Run the embedded migrations at start (they are idempotent and lock against each other).
    pub migrate: bool,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        DatabaseSettings {
            url: "postgres://postgres@127.0.0.1:5432/relay".into(),
            max_connections: 16,
            connect_attempts: 120,
            migrate: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Json,
    Pretty,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct TelemetrySettings {
    /// `EnvFilter` directives; `RUST_LOG` wins when set.
    pub log_level: String,
    pub log_format: LogFormat,
    /// OTLP/gRPC endpoint (e.g. `http://127.0.0.1:4317`). Export is off when unset.
    pub otlp_endpoint: Option<String>,
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            log_level: "info".into(),
            log_format: LogFormat::Json,
            otlp_endpoint: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(#[from] config::ConfigError);

/// Loads `T` from its defaults, then the file named by `RELAY_CONFIG` (or `relay.toml` in the
/// working directory when it exists), then `RELAY_*` environment variables.
pub fn load<T: Serialize + DeserializeOwned + Default>() -> Result<T, SettingsError> {
    let file = std::env::var("RELAY_CONFIG").ok();
    let mut builder =
        config::Config::builder().add_source(config::Config::try_from(&T::default())?);
    builder = match file {
        Some(path) => builder.add_source(config::File::with_name(&path).required(true)),
        None => builder.add_source(config::File::with_name("relay.toml").required(false)),
    };
    let cfg = builder
        .add_source(
            config::Environment::with_prefix("RELAY")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true),
        )
        .build()?;
    Ok(cfg.try_deserialize()?)
}
