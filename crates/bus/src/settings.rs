//! Layered configuration: built-in defaults, then a TOML file, then `RELAY_*` environment
//! variables (`RELAY_NATS__URL`, `RELAY_DATABASE__URL`, …; `__` separates sections).

use serde::{Deserialize, Serialize, de::DeserializeOwned};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct NatsSettings {
    /// One server, or several separated by commas (the nodes of a cluster): the first
    /// connection tries them in random order, and a client that loses its node reconnects to
    /// any other (the servers also tell it about the rest of their cluster).
    pub url: String,
    /// How many times to try the first connection (500 ms apart) before giving up.
    pub connect_attempts: u32,
    /// This process's NATS identity: a `.creds` file (`relayctl auth init` writes them)…
    pub creds_file: Option<String>,
    /// …or the text of one (how the spawner hands a harness the identity it minted for it).
    pub creds: Option<String>,
    /// PEM file of the CA that signed the NATS server's certificate; TLS is required when set.
    pub tls_ca_file: Option<String>,
}

impl NatsSettings {
    /// The servers of `url`; an error names an empty entry.
    pub fn servers(&self) -> Result<Vec<String>, String> {
        let servers: Vec<String> = self.url.split(',').map(|u| u.trim().to_string()).collect();
        if servers.iter().any(String::is_empty) {
            return Err(format!(
                "nats.url {:?}: one server URL, or several separated by commas, none empty",
                self.url
            ));
        }
        Ok(servers)
    }
}

impl Default for NatsSettings {
    fn default() -> Self {
        NatsSettings {
            url: "nats://127.0.0.1:4222".into(),
            connect_attempts: 120,
            creds_file: None,
            creds: None,
            tls_ca_file: None,
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
    /// How long a row an outbox has forwarded to the event log stays in it (for inspection)
    /// before it is deleted ([`crate::outbox`]); the event log holds the event from then on.
    pub outbox_keep_ms: u64,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        DatabaseSettings {
            url: "postgres://postgres@127.0.0.1:5432/relay".into(),
            max_connections: 16,
            connect_attempts: 120,
            migrate: true,
            outbox_keep_ms: 3_600_000,
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
    /// Address for `GET /healthz` (200 while NATS is connected), e.g. `0.0.0.0:9090`; off when unset.
    pub health_listen: Option<String>,
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            log_level: "info".into(),
            log_format: LogFormat::Json,
            otlp_endpoint: None,
            health_listen: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(#[from] config::ConfigError);

/// Loads `T` from its defaults, then the file named by `RELAY_CONFIG` (or `relay.toml` in the
/// working directory when it exists), then `RELAY_*` environment variables.
pub fn load<T: Serialize + DeserializeOwned + Default>() -> Result<T, SettingsError> {
    load_from(std::env::var("RELAY_CONFIG").ok().as_deref(), None)
}

/// [`load`] with the file and environment given explicitly (`env: None` reads the process's).
pub fn load_from<T: Serialize + DeserializeOwned + Default>(
    file: Option<&str>,
    env: Option<config::Map<String, String>>,
) -> Result<T, SettingsError> {
    let mut builder = config::Config::builder().add_source(config::Config::try_from(&T::default())?);
    builder = match file {
        Some(path) => builder.add_source(config::File::with_name(path).required(true)),
        None => builder.add_source(config::File::with_name("relay.toml").required(false)),
    };
    let cfg = builder
        .add_source(
            config::Environment::with_prefix("RELAY")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .source(env),
        )
        .build()?;
    Ok(cfg.try_deserialize()?)
}

/// `config/relay.example.toml` loaded alone (no environment), for tests that check the example
/// file against each service's defaults.
pub fn load_example<T: Serialize + DeserializeOwned + Default>() -> Result<T, SettingsError> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/relay.example.toml");
    load_from(Some(path), Some(Default::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Serialize, Deserialize)]
    #[serde(default)]
    struct Sample {
        nats: NatsSettings,
        database: DatabaseSettings,
    }

    #[test]
    fn env_overrides_file_which_overrides_defaults() {
        let dir = std::env::temp_dir().join(format!("relay-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("relay.toml");
        let toml = "[nats]\nurl = \"nats://127.0.0.1:5000\"\nconnect_attempts = 42\n[database]\nmax_connections = 3\n";
        std::fs::write(&file, toml).unwrap();
        let env = [
            ("RELAY_NATS__URL", "nats://127.0.0.1:6000"),
            ("RELAY_DATABASE__MIGRATE", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s: Sample = load_from(Some(file.to_str().unwrap()), Some(env)).unwrap();
        assert_eq!(s.nats.url, "nats://127.0.0.1:6000", "env wins over the file");
        assert_eq!(s.nats.connect_attempts, 42, "file wins over defaults");
        assert_eq!(s.database.max_connections, 3);
        assert!(!s.database.migrate, "env values are parsed");
        assert_eq!(
            s.database.connect_attempts,
            DatabaseSettings::default().connect_attempts,
            "defaults fill the rest"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_named_config_file_that_is_missing_is_an_error() {
        assert!(load_from::<Sample>(Some("/nonexistent/relay.toml"), Some(Default::default())).is_err());
    }
}
