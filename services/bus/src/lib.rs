//! The runtime every relay-mesh service stands on.
//!
//! - [`service`]: registers a NATS micro service (queue group, `$SRV.PING/INFO/STATS`) whose
//!   endpoints are plain async functions `Fn(State, Request) -> Result<Reply, E>`.
//! - [`client`]: typed `bus.request`-style calls and event publishing, with trace context.
//! - [`settings`]: layered configuration (defaults → file → `RELAY_*` env).
//! - [`telemetry`]: JSON logs, W3C trace context, opt-in OTLP export.
//! - [`db`]: Postgres pool with start-up retries and the embedded migrations.

pub mod client;
pub mod db;
pub mod service;
pub mod settings;
pub mod telemetry;
mod trace;

pub use relay_contracts::{ErrorCode, WireError};

/// Unix time in milliseconds, the unit of every timestamp on the wire.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Connects to NATS, retrying until it answers: a service started before NATS waits for it
/// instead of dying. Once connected, async-nats reconnects by itself.
pub async fn connect_nats(
    settings: &settings::NatsSettings,
    name: &str,
) -> Result<async_nats::Client, async_nats::ConnectError> {
    let mut attempt = 1u32;
    loop {
        let opts = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(std::time::Duration::from_secs(2))
            .max_reconnects(None);
        match opts.connect(&settings.url).await {
            Ok(client) => return Ok(client),
            Err(e) if attempt >= settings.connect_attempts => return Err(e),
            Err(e) => {
                tracing::warn!(url = %settings.url, error = %e, attempt, "NATS not reachable yet, retrying")
            }
        }
        attempt += 1;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}
