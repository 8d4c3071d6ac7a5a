//! The runtime every relay-mesh service stands on.
//!
//! - [`service`]: registers a NATS micro service (queue group, `$SRV.PING/INFO/STATS`) whose
//!   endpoints are plain async functions `Fn(State, Request) -> Result<Reply, E>`.
//! - [`client`]: typed `bus.request`-style calls and event publishing, with trace and request
//!   context ([`context`]: who calls, in which workspace).
//! - [`settings`]: layered configuration (defaults → file → `RELAY_*` env).
//! - [`telemetry`]: JSON logs, W3C trace context, opt-in OTLP export.
//! - [`db`]: Postgres pool with start-up retries and the embedded migrations.
//! - [`outbox`]: forwards a service's outbox table of events to the event log.
//! - [`follow`]: reads the event log from a service's own cursor, one replica at a time.
//! - [`health`]: an optional `GET /healthz` for container probes.

pub mod agents;
pub mod audit;
pub mod client;
pub mod context;
pub mod db;
pub mod follow;
pub mod health;
pub mod identity;
pub mod outbox;
#[cfg(feature = "pki")]
pub mod pki;
pub mod retention;
pub mod scope;
pub mod service;
pub mod settings;
pub mod telemetry;
pub mod trace;

pub use relay_contracts::{Caller, ErrorCode, RequestContext, WireError};

/// Writes `text` to `path` (created or truncated) with Unix `mode`: credentials and keys 0600.
pub(crate) fn write_file(path: &std::path::Path, text: &str, mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Unix time in milliseconds, the unit of every timestamp on the wire.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Keeps the longest prefix of `items` whose JSON fits in `budget` bytes (never fewer than one
/// item), so a page fits in one NATS message; returns whether it cut.
pub fn fit_json<T: serde::Serialize>(items: &mut Vec<T>, budget: usize) -> bool {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut used = Count(0);
    for (i, item) in items.iter().enumerate() {
        let _ = serde_json::to_writer(&mut used, item);
        used.0 += 1; // the comma
        if used.0 > budget && i > 0 {
            items.truncate(i);
            return true;
        }
    }
    false
}

/// Any error `main` can end with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The settings every bus service has, read from the same file and environment as its own.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct CommonSettings {
    nats: settings::NatsSettings,
    database: settings::DatabaseSettings,
    telemetry: settings::TelemetrySettings,
}

/// What every bus service's `main` does: load its settings `T`, start logs and traces, connect
/// to Postgres (running the migrations) and NATS, serve `/healthz` if asked; then `serve`
/// builds the handler state and registers the endpoints, and the service runs until SIGTERM,
/// finishing the requests in flight.
pub async fn run_service<T, S, F, Fut>(name: &'static str, serve: F) -> Result<(), BoxError>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Default,
    S: Clone + Send + Sync + 'static,
    F: FnOnce(T, sqlx::PgPool, async_nats::Client) -> Fut,
    Fut: std::future::Future<Output = Result<service::ServiceHost<S>, BoxError>>,
{
    let common: CommonSettings = settings::load()?;
    let own: T = settings::load()?;
    let _telemetry = telemetry::init(name, &common.telemetry)?;
    let db = db::connect(&common.database).await?;
    outbox::keep_forwarded(std::time::Duration::from_millis(common.database.outbox_keep_ms));
    let nats = connect_nats(&common.nats, name).await?;
    health::serve(common.telemetry.health_listen.as_deref(), nats.clone()).await?;
    let mut host = serve(own, db, nats).await?;
    host.open().await?;
    tracing::info!(service = name, "serving");
    host.run_until_shutdown(std::time::Duration::from_secs(10)).await;
    Ok(())
}

/// Connects to NATS, retrying until it answers: a service started before NATS waits for it
/// instead of dying. Once connected, async-nats reconnects by itself.
///
/// With credentials, the process is who they say: a service or the gateway by name (its
/// replies come to `_INBOX.<name>`), a harness as its agent in its workspace (its calls go out
/// on `harness.<workspace>.<agentId>.…`, see [`relay_contracts::access`]).
pub async fn connect_nats(settings: &settings::NatsSettings, name: &str) -> Result<async_nats::Client, BoxError> {
    let creds = match (&settings.creds, &settings.creds_file) {
        (Some(text), _) if !text.trim().is_empty() => Some(text.clone()),
        (_, Some(path)) if !path.is_empty() => {
            Some(std::fs::read_to_string(path).map_err(|e| format!("cannot read NATS credentials {path}: {e}"))?)
        }
        _ => None,
    };
    let mut inbox = None;
    match &creds {
        Some(text) => match identity::creds_identity(text)? {
            (agent, Some(workspace)) => {
                context::set_harness(&workspace, &agent);
                inbox = Some(relay_contracts::access::harness_inbox_prefix(&agent));
            }
            (who, None) => {
                context::set_default_identity(Caller::Service(who.clone()));
                inbox = Some(relay_contracts::access::inbox_prefix(&who));
            }
        },
        None => context::set_default_identity(Caller::Service(name.to_string())),
    }
    let servers = settings
        .servers()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut attempt = 1u32;
    loop {
        let mut opts = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(std::time::Duration::from_secs(2))
            .max_reconnects(None)
            .event_callback(|event| async move {
                // A permission violation is the server refusing a publish or subscribe: loud.
                if let async_nats::Event::ServerError(e) = event {
                    tracing::error!(error = %e, "NATS server error");
                }
            });
        if let Some(text) = &creds {
            opts = opts.credentials(text)?;
        }
        if let Some(prefix) = &inbox {
            opts = opts.custom_inbox_prefix(prefix.clone());
        }
        if let Some(ca) = &settings.tls_ca_file {
            opts = opts.add_root_certificates(ca.into()).require_tls(true);
        }
        match opts.connect(servers.as_slice()).await {
            Ok(client) => return Ok(client),
            Err(e) if attempt >= settings.connect_attempts => return Err(e.into()),
            Err(e) => {
                tracing::warn!(url = %settings.url, error = %e, attempt, "NATS not reachable yet, retrying")
            }
        }
        attempt += 1;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
