//! The gateway's HTTP router: every surface mounted, the layers around them (load shedding,
//! NUL refusal, auth, metrics, tracing, CORS), health and the OpenAPI document.

use crate::extract::Json;
use crate::{ApiError, AppState, auth, metrics, rest, sse};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Router, middleware};
use serde::Serialize;
use tower_http::cors::{AllowOrigin, Any, CorsLayer};

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/sessions", post(rest::create_session).get(rest::list_sessions))
        .route("/sessions/search", get(rest::search_sessions))
        .route("/sessions/counts", get(rest::session_counts))
        .route("/permissions", get(rest::all_permissions))
        .route("/questions", get(rest::all_questions))
        .route(
            "/sessions/{id}",
            get(rest::get_session)
                .patch(rest::update_session)
                .delete(rest::end_session),
        )
        .route("/sessions/{id}/messages", post(rest::send_message))
        .route("/sessions/{id}/close", post(rest::close_session))
        .route("/sessions/{id}/resume", post(rest::resume_session))
        .route("/sessions/{id}/archive", post(rest::archive_session))
        .route("/sessions/{id}/purge", post(rest::purge_session))
        .route("/sessions/{id}/fork", post(rest::fork_session))
        .route("/sessions/{id}/interrupt", post(rest::interrupt_session))
        .route("/sessions/{id}/turns", get(rest::list_turns))
        .route("/sessions/{id}/turns/{turn_id}/cancel", post(rest::cancel_turn))
        .route("/sessions/{id}/events/sse", get(sse::session_events))
        .route("/sessions/{id}/context-window", get(rest::context_window))
        .route("/agents", get(rest::list_agents))
        .route("/agents/{name}", get(rest::get_agent))
        .route("/agents/{name}/capabilities", get(rest::agent_capabilities))
        .route("/agents/{name}/output", get(rest::agent_output))
        .route("/agents/{name}/permissions", get(rest::list_permissions))
        .route("/agents/{name}/permissions/{request_id}/approve", post(rest::approve))
        .route("/agents/{name}/permissions/{request_id}/deny", post(rest::deny))
        .route("/agents/{name}/questions", get(rest::list_questions))
        .route("/agents/{name}/questions/{question_id}/answer", post(rest::answer))
        .route("/agents/{name}/pause", post(rest::pause))
        .route("/agents/{name}/resume", post(rest::resume))
        .route("/agents/{name}/stop", post(rest::stop))
        .route("/agents/{name}/input", post(rest::input))
        .route("/agents/{name}/interrupt", post(rest::interrupt_agent))
        .route("/agents/{name}/flush", post(rest::flush))
        .route("/agents/{name}/events/sse", get(sse::agent_events))
        .route("/agents/{name}/agui", post(crate::agui::run))
        .route("/a2a", post(crate::a2a::workspace_rpc))
        .route("/a2a/.well-known/agent-card.json", get(crate::a2a::workspace_card))
        .route("/a2a/agents/{name}", post(crate::a2a::agent_rpc))
        .route(
            "/a2a/agents/{name}/.well-known/agent-card.json",
            get(crate::a2a::agent_card),
        )
        .route("/actions", get(crate::actions::list))
        .route("/actions/invoke", post(crate::actions::invoke))
        .route(
            "/consensus",
            post(crate::actions::propose).get(crate::actions::list_proposals),
        )
        .route("/consensus/{id}", get(crate::actions::get_proposal))
        .route("/sessions/{id}/compress", post(crate::session_context::compress))
        .route(
            "/sessions/{id}/request-compression",
            post(crate::session_context::request_compression),
        )
        .route(
            "/sessions/{id}/system-prompt",
            get(crate::session_context::system_prompt),
        )
        .route("/sessions/{id}/client", post(crate::session_context::observe_client))
        .route(
            "/sessions/{id}/agents/{agent_id}/swap",
            post(crate::session_context::swap_agent),
        )
        .route("/personas", get(crate::session_context::list_personas))
        .route(
            "/personas/{id}",
            get(crate::session_context::get_persona)
                .put(crate::session_context::put_persona)
                .delete(crate::session_context::delete_persona),
        )
        .route("/profiles", get(crate::session_context::list_profiles))
        .route(
            "/profiles/{id}",
            get(crate::session_context::get_profile)
                .put(crate::session_context::put_profile)
                .delete(crate::session_context::delete_profile),
        )
        .route(
            "/webhooks",
            post(crate::automation::create_webhook).get(crate::automation::list_webhooks),
        )
        .route(
            "/webhooks/{id}",
            get(crate::automation::get_webhook)
                .patch(crate::automation::update_webhook)
                .delete(crate::automation::delete_webhook),
        )
        .route("/webhooks/{id}/deliveries", get(crate::automation::webhook_deliveries))
        .route(
            "/webhooks/{id}/deliveries/{delivery_id}/replay",
            post(crate::automation::replay),
        )
        .route(
            "/schedules",
            post(crate::automation::create_schedule).get(crate::automation::list_schedules),
        )
        .route(
            "/schedules/{id}",
            get(crate::automation::get_schedule).delete(crate::automation::delete_schedule),
        )
        .route("/schedules/{id}/pause", post(crate::automation::pause_schedule))
        .route("/schedules/{id}/resume", post(crate::automation::resume_schedule))
        .route("/schedules/{id}/runs", get(crate::automation::schedule_runs))
        .route("/consensus/{id}/cancel", post(crate::actions::cancel_proposal))
        .route("/messages", post(crate::messaging::send).get(crate::messaging::search))
        .route("/messages/{id}", get(crate::messaging::get))
        .route("/messages/{id}/thread", get(crate::messaging::thread))
        .route(
            "/channels",
            post(crate::messaging::create_channel).get(crate::messaging::list_channels),
        )
        .route("/channels/{name}/members", get(crate::messaging::members))
        .route("/channels/{name}/join", post(crate::messaging::join))
        .route("/channels/{name}/leave", post(crate::messaging::leave))
        .route("/channels/{name}/history", get(crate::messaging::history))
        .route("/channels/{name}/events/sse", get(sse::channel_events))
        .route("/deliveries", get(rest::list_deliveries))
        .route("/deliveries/{id}", get(rest::get_delivery))
        .route("/deliveries/{id}/retry", post(rest::retry_delivery))
        .route("/deliveries/{id}/cancel", post(rest::cancel_delivery))
        .route("/events", get(rest::query_events))
        .route("/events/sse", get(sse::all_events))
        .route("/costs", get(rest::costs))
        .route("/costs/budgets", get(rest::budgets))
        .route("/hosts", get(rest::hosts))
        .route("/workspaces", post(rest::create_workspace).get(rest::list_workspaces))
        .route(
            "/workspaces/{name}",
            get(rest::get_workspace).delete(rest::delete_workspace),
        )
        .route(
            "/workspaces/{name}/delivery-policy",
            axum::routing::put(rest::set_delivery_policy),
        )
        .route("/audit", get(rest::audit))
        .route("/keys", post(rest::create_key).get(rest::list_keys))
        .route("/keys/{id}", axum::routing::delete(rest::revoke_key))
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
