//! The gateway's HTTP router: every surface mounted, the layers around them (load shedding,
//! NUL refusal, auth, metrics, tracing, CORS), health and the OpenAPI document.

use crate::extract::Json;
use crate::{ApiError, AppState, auth, metrics};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Router, middleware};
use serde::Serialize;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

pub fn router(state: AppState) -> Router {
    // The documented routes carry their OpenAPI operations (routes.rs); the protocol
    // surfaces below are documented by their own specs (A2A cards, AG-UI, MCP).
    let (documented, _) = crate::routes::api().split_for_parts();
    let api = documented
        .route("/agents/{name}/agui", post(crate::agui::run))
        .route("/a2a", post(crate::a2a::workspace_rpc))
        .route("/a2a/.well-known/agent-card.json", get(crate::a2a::workspace_card))
        .route("/a2a/agents/{name}", post(crate::a2a::agent_rpc))
        .route(
            "/a2a/agents/{name}/.well-known/agent-card.json",
            get(crate::a2a::agent_card),
        )
        .route("/openapi.json", get(openapi))
        .route_service("/mcp", crate::mcp::service(state.clone()))
        .fallback(not_found)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::openapi::refuse_undeclared_bodies,
        ))
        .route_layer(middleware::from_fn(refuse_nul))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::require_bearer));

    let mut app = Router::new()
        .nest("/api/v1", api)
        .merge(crate::console::router())
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics::serve))
        .merge(crate::grpc::router(state.clone()))
        .layer(middleware::from_fn_with_state(state.clone(), metrics::track))
        .layer(middleware::from_fn(crate::error::json_errors))
        .layer(middleware::from_fn(crate::trace::http_span))
        .layer(axum::extract::DefaultBodyLimit::max(state.settings.body_limit_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), shed));
    // Outside the shedder: a browser must read a refusal as one, not as a CORS failure.
    if let Some(cors) = cors(&state.settings.cors_origins) {
        app = app.layer(cors);
    }
    app.with_state(state)
}

fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| o.parse().ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods(Any)
            .allow_headers(Any)
            .expose_headers(Any),
    )
}

async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        crate::openapi::json(),
    )
        .into_response()
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such route".into())
}

// ---------------------------------------------------------------------------------------------
// Health

#[derive(Serialize)]
struct Health {
    status: &'static str,
    nats: &'static str,
    postgres: &'static str,
    /// `keys`, or `open` when callers without a key are served as an admin (`gateway.open`).
    auth: &'static str,
}

async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

/// Ready when NATS answers and Postgres answers and takes writes (a standby does not); 503
/// says which one is not.
async fn readyz(State(s): State<AppState>) -> Response {
    let nats_ok =
        matches!(s.nats.connection_state(), async_nats::connection::State::Connected) && s.nats.flush().await.is_ok();
    // A standby answers, but it is not the database: every write would fail.
    let writable = match s.db.acquire().await {
        Ok(mut conn) => relay_bus::db::is_writable(&mut conn).await.ok(),
        Err(_) => None,
    };
    let pg_ok = writable == Some(true);
    let body = Health {
        status: if nats_ok && pg_ok { "ready" } else { "unavailable" },
        nats: if nats_ok { "ok" } else { "unreachable" },
        postgres: match writable {
            Some(true) => "ok",
            Some(false) => "read-only",
            None => "unreachable",
        },
        auth: if s.keys.open { "open" } else { "keys" },
    };
    let status = if nats_ok && pg_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// Sheds load: with `gateway.max_in_flight` API requests being handled, another is refused at
/// once (503, Retry-After) instead of queued; a queue would only make every caller wait past its
/// timeout and hold its memory meanwhile. A stream's permit goes once its response starts. Only
/// CORS is outside it, so that a refusal costs less than serving would (no span, no metrics but
/// the shed count, no routing): under ten times the load, refusals must not take the CPU the
/// requests being served need.
async fn shed(State(s): State<AppState>, request: axum::extract::Request, next: middleware::Next) -> Response {
    if !request.uri().path().starts_with("/api/v1/") {
        return next.run(request).await;
    }
    let Ok(_permit) = s.in_flight.clone().try_acquire_owned() else {
        s.metrics.shed.inc();
        let limit = s.settings.max_in_flight;
        return ApiError::Busy(format!(
            "the gateway is handling its limit of {limit} requests (gateway.max_in_flight); retry after 1 s"
        ))
        .into_response();
    };
    next.run(request).await
}

/// Refuses a NUL (`%00`) anywhere in the path or query, for the same reason as [`parse`].
async fn refuse_nul(request: axum::extract::Request, next: middleware::Next) -> Response {
    let uri = request.uri().to_string();
    if uri.contains("%00") {
        return ApiError::Invalid("the URL may not contain NUL (%00)".into()).into_response();
    }
    next.run(request).await
}
