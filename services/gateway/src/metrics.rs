//! Prometheus metrics for `/metrics`: requests by route and status, latency, and the SSE
//! streams (open connections, events sent, catch-ups), so a leak or a stalled client shows.

use crate::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Instant;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub latency: Family<RouteLabels, Histogram>,
    /// SSE streams open now; back to its old value once clients disconnect.
    pub sse_connections: Gauge,
    pub sse_events: Counter,
    /// Streams that fell behind the live hub and were caught up from the log.
    pub sse_catch_ups: Counter,
    pub sse_rejected: Counter,
    /// Live events the hub fetched from the log because NATS skipped or reordered them.
    pub hub_gap_fills: Counter,
    /// Requests refused with 429 by a key's rate limit.
    pub rate_limited: Counter,
    /// Requests refused with 503 at `gateway.max_in_flight`.
    pub shed: Counter,
}

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("relay_gateway");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(latency_histogram as fn() -> Histogram);
        let sse_connections = Gauge::default();
        let sse_events = Counter::default();
        let sse_catch_ups = Counter::default();
        let sse_rejected = Counter::default();
        let hub_gap_fills = Counter::default();
        let rate_limited = Counter::default();
        let shed = Counter::default();
        registry.register(
            "shed",
            "Requests refused with 503 because the gateway was handling its limit (gateway.max_in_flight)",
            shed.clone(),
        );
        registry.register(
            "rate_limited",
            "Requests refused with 429 by a key's rate limit",
            rate_limited.clone(),
        );
        registry.register("http_requests", "HTTP requests by route and status", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by route",
            latency.clone(),
        );
        registry.register("sse_connections", "Open SSE streams", sse_connections.clone());
        registry.register("sse_events", "Events written to SSE streams", sse_events.clone());
        registry.register(
            "sse_catch_ups",
            "SSE streams caught up from the event log after falling behind",
            sse_catch_ups.clone(),
        );
        registry.register(
            "sse_rejected",
            "SSE streams refused at the connection cap",
            sse_rejected.clone(),
        );
        registry.register(
            "hub_gap_fills",
            "Live events read from the log because NATS missed them",
            hub_gap_fills.clone(),
        );
        Metrics {
            registry,
            requests,
            latency,
            sse_connections,
            sse_events,
            sse_catch_ups,
            sse_rejected,
            hub_gap_fills,
            rate_limited,
            shed,
        }
    }
}

impl Metrics {
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Counts every request under its route template (`/api/v1/sessions/{id}`), not its path, so
/// ids do not explode the label set.
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    let method = request.method().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let m = &state.metrics;
    m.latency
        .get_or_create(&RouteLabels { route: route.clone() })
        .observe(started.elapsed().as_secs_f64());
    m.requests
        .get_or_create(&RequestLabels {
            method,
            route,
            status: response.status().as_u16(),
        })
        .inc();
    response
}

pub async fn serve(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        state.metrics.render(),
    )
        .into_response()
}
