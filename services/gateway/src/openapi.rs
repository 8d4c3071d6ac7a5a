//! The OpenAPI 3.1 document, generated from the handlers' annotations and the contract types.
//! `make openapi` writes it to docs/api/openapi.json; a test fails when the two differ.

use crate::{rest, sse};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "relay-mesh HTTP API",
        description = "Sessions, messages, permissions, questions, agent control, deliveries, events (REST and SSE) and costs over the relay-mesh services. Errors are `{\"error\":{code,message,retryable}}`.",
        license(name = "Apache-2.0")
    ),
    servers((url = "/api/v1")),
    paths(
        rest::create_session, rest::list_sessions, rest::get_session, rest::end_session, rest::send_message,
        rest::close_session, rest::resume_session, rest::archive_session, rest::purge_session, rest::fork_session,
        rest::list_permissions, rest::approve, rest::deny, rest::list_questions, rest::answer,
        rest::pause, rest::resume, rest::stop, rest::input, rest::flush,
        rest::list_deliveries, rest::get_delivery, rest::retry_delivery, rest::cancel_delivery,
        rest::query_events, rest::costs, sse::all_events, sse::agent_events, sse::session_events,
    ),
    // Enums used only by query parameters are not collected on their own.
    components(schemas(relay_contracts::session::StatusFilter)),
    modifiers(&BearerAuth),
    security(("bearerAuth" = [])),
    tags(
        (name = "sessions"), (name = "permissions"), (name = "questions"), (name = "agents"),
        (name = "deliveries"), (name = "events"), (name = "costs")
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut scheme = Http::new(HttpAuthScheme::Bearer);
        scheme.description = Some(
            "Required on every /api/v1 route when the gateway has a token (gateway.api_token or RELAY_API_TOKEN); optional for local development.".into(),
        );
        components.add_security_scheme("bearerAuth", SecurityScheme::Http(scheme));
    }
}

/// The document as served and checked in: pretty JSON with a trailing newline.
pub fn json() -> String {
    let mut s = ApiDoc::openapi().to_pretty_json().unwrap_or_default();
    s.push('\n');
    s
}
