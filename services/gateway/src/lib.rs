//! The HTTP gateway: REST `/api/v1` and SSE over the NATS services (seed 003 sections 2, 3, 5).
//!
//! It holds no state of its own. Every REST call is one or two bus requests, carrying the trace
//! context. SSE streams read the event log (`event.since`), then one shared live subscription
//! (`hub`), with the event seq as the SSE id.
//!
//! # Layout
//! - `router` builds the app from `routes` (every documented route with its OpenAPI
//!   operation), the protocol routes and the console; [`serve`] binds it.
//! - [`rest`]: one module per REST resource (sessions, agents, permissions, deliveries,
//!   messaging, actions, automation, tenancy, reports, a session's context).
//! - `ops`: what several surfaces do (create a session, send, query events), plain functions
//!   under REST and the MCP tools; `extract`: the extractors every handler uses.
//! - The other surfaces: [`sse`], [`grpc`], [`mcp`], [`a2a`], [`agui`], [`console`].
//! - [`auth`] (keys, roles, workspaces), [`error`] (one error type mapped once to HTTP),
//!   [`responses`] (the common error responses, declared once), [`metrics`], [`trace`].

pub mod a2a;
pub mod agui;
pub mod auth;
pub mod console;
mod cookies;
pub mod error;
mod extract;
pub mod grpc;
pub mod mcp;
pub mod metrics;
pub mod openapi;
mod ops;
pub mod responses;
pub mod rest;
mod router;
mod routes;
pub mod serve;
pub mod sse;
pub mod trace;

use axum::Router;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

pub use error::ApiError;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct GatewaySettings {
    /// Address the HTTP server binds.
    pub listen: String,
    /// Shared bearer token: an admin key of `default`. `RELAY_API_TOKEN` in the environment is
    /// used when this is empty. Every `/api/v1` route needs it or an API key (`rk_…`).
    pub api_token: String,
    /// Local development only: with no shared token, a caller that presents nothing is served as
    /// an admin of `default`. Honoured only on a loopback `listen` address (the gateway refuses
    /// to start open on any other); said at start, in the log and on `/readyz`.
    pub open: bool,
    /// How long a bus request may take before the client gets 504.
    pub request_timeout_ms: u64,
    /// How long `POST /sessions` with `cli` waits for the spawner (above its attach timeout).
    pub spawn_timeout_ms: u64,
    /// Largest request body accepted (413 above it).
    pub body_limit_bytes: usize,
    /// Origins allowed by CORS; `["*"]` allows any, empty turns CORS headers off.
    pub cors_origins: Vec<String>,
    /// Interval of the `: heartbeat` comment on idle SSE streams.
    pub sse_heartbeat_ms: u64,
    /// API requests handled at once; above it a request gets 503 with Retry-After at once
    /// instead of waiting in a queue (an open SSE stream counts against sse_max_connections).
    pub max_in_flight: usize,
    /// Open SSE streams allowed at once; above it a new stream gets 503 with Retry-After.
    pub sse_max_connections: usize,
    /// Events buffered per SSE client before it falls behind and is caught up from the log.
    pub sse_client_buffer: usize,
    /// Live events the hub keeps for clients that are a little behind.
    pub sse_hub_capacity: usize,
    /// Events per `event.since` page when replaying.
    pub sse_replay_page: i64,
    /// How long an AG-UI run may take before it ends with `RUN_ERROR` (`timeout`), and a
    /// blocking A2A `SendMessage` waits before answering with the task as it stands.
    pub run_timeout_ms: u64,
    /// Requests per second each API key may make, sustained (the shared token is not limited);
    /// 0: no limit.
    pub rate_limit_per_sec: u32,
    /// How many it may make at once above that rate.
    pub rate_limit_burst: u32,
    /// PEM certificate (chain) and key: serve HTTPS instead of HTTP on `listen` when both are
    /// set. `kill -HUP` reads them again.
    pub tls_cert_file: Option<String>,
    pub tls_key_file: Option<String>,
    /// Behind a proxy that appends the client's address to `X-Forwarded-For`: the audit trail
    /// records that address instead of the proxy's. Off by default (a client could forge it).
    pub forwarded_for: bool,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        GatewaySettings {
            listen: "127.0.0.1:8080".into(),
            api_token: String::new(),
            open: false,
            request_timeout_ms: 5_000,
            spawn_timeout_ms: 35_000,
            body_limit_bytes: 1024 * 1024,
            cors_origins: vec!["*".into()],
            sse_heartbeat_ms: 30_000,
            max_in_flight: 512,
            sse_max_connections: 10_000,
            sse_client_buffer: 256,
            sse_hub_capacity: 8_192,
            sse_replay_page: 1_000,
            run_timeout_ms: 600_000,
            rate_limit_per_sec: 100,
            rate_limit_burst: 200,
            tls_cert_file: None,
            tls_key_file: None,
            forwarded_for: false,
        }
    }
}

impl GatewaySettings {
    /// Whether unauthenticated callers are served (as an admin of `default`) on `bound`: only
    /// when asked for, with no shared token, on loopback. Asked for anywhere else: an error.
    pub fn serves_open(&self, has_token: bool, bound: std::net::SocketAddr) -> Result<bool, String> {
        if !self.open || has_token {
            return Ok(false);
        }
        if !bound.ip().is_loopback() {
            return Err(format!(
                "gateway.open serves every caller as an admin; it is allowed on a loopback address only, not {bound}: \
                 set an API token (RELAY_API_TOKEN) or create a key (`relayctl keys create admin --role admin`)"
            ));
        }
        Ok(true)
    }

    /// The certificate and key to serve HTTPS with; both or neither must be set.
    pub fn tls(&self) -> Result<Option<(String, String)>, String> {
        match (&self.tls_cert_file, &self.tls_key_file) {
            (Some(cert), Some(key)) => Ok(Some((cert.clone(), key.clone()))),
            (None, None) => Ok(None),
            _ => Err("gateway.tls_cert_file and gateway.tls_key_file go together: set both or neither".into()),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub nats: relay_bus::settings::NatsSettings,
    pub database: relay_bus::settings::DatabaseSettings,
    pub telemetry: relay_bus::settings::TelemetrySettings,
    pub gateway: GatewaySettings,
}

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub nats: async_nats::Client,
    /// Only for `/readyz`: the gateway stores nothing.
    pub db: sqlx::PgPool,
    pub settings: Arc<GatewaySettings>,
    pub metrics: Arc<metrics::Metrics>,
    pub hub: sse::Hub,
    /// API keys, the shared token, revocations and rate limits.
    pub keys: Arc<auth::Keys>,
    /// One permit per API request being handled (`max_in_flight`).
    pub in_flight: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    /// The state of a gateway bound to `bound`; an error when it is asked to serve open where it
    /// may not ([`GatewaySettings::serves_open`]).
    pub fn new(
        nats: async_nats::Client,
        db: sqlx::PgPool,
        settings: GatewaySettings,
        bound: std::net::SocketAddr,
    ) -> Result<AppState, String> {
        let metrics = Arc::new(metrics::Metrics::default());
        let env_token = std::env::var("RELAY_API_TOKEN").unwrap_or_default();
        let token = if settings.api_token.is_empty() {
            env_token
        } else {
            settings.api_token.clone()
        };
        let open = settings.serves_open(!token.is_empty(), bound)?;
        if open {
            tracing::warn!(%bound, "gateway is OPEN: callers without a key are served as an admin of `default` (gateway.open, loopback only)");
        }
        let hub = sse::Hub::start(nats.clone(), &settings, metrics.clone());
        let keys = Arc::new(auth::Keys::new(
            (!token.is_empty()).then(|| auth::Token::new(&token)),
            open,
            settings.rate_limit_per_sec,
            settings.rate_limit_burst,
        ));
        auth::watch_revocations(nats.clone(), keys.clone());
        Ok(AppState {
            nats,
            db,
            keys,
            in_flight: Arc::new(tokio::sync::Semaphore::new(settings.max_in_flight.max(1))),
            settings: Arc::new(settings),
            metrics,
            hub,
        })
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.settings.request_timeout_ms)
    }
}

/// The whole HTTP surface: `/api/v1` (behind auth), health and metrics (open).
pub fn router(state: AppState) -> Router {
    router::router(state)
}

/// A pool that does not connect until asked, so the gateway starts (and answers `/healthz`)
/// while Postgres is down; `/readyz` tells the difference.
pub fn lazy_pool(settings: &relay_bus::settings::DatabaseSettings) -> Result<sqlx::PgPool, sqlx::Error> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(2))
        .connect_lazy(&settings.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_in_openapi_document_is_the_generated_one() {
        let checked_in = include_str!("../../../docs/api/openapi.json");
        assert!(
            checked_in == openapi::json(),
            "docs/api/openapi.json is stale: run `make openapi` and commit it"
        );
    }

    #[test]
    fn the_example_config_file_loads_with_the_default_gateway_settings() {
        let s: Settings = relay_bus::settings::load_example().unwrap();
        let d = GatewaySettings::default();
        assert_eq!(s.gateway.listen, d.listen);
        assert_eq!(s.gateway.spawn_timeout_ms, d.spawn_timeout_ms);
        assert_eq!(s.gateway.sse_heartbeat_ms, d.sse_heartbeat_ms);
        assert_eq!(s.gateway.sse_max_connections, d.sse_max_connections);
        assert_eq!(s.gateway.max_in_flight, d.max_in_flight);
        assert_eq!(s.gateway.cors_origins, d.cors_origins);
        assert_eq!(s.gateway.body_limit_bytes, d.body_limit_bytes);
    }
}
