//! The documented API: each route declared with its OpenAPI operation (the handler's
//! `#[utoipa::path]`), so a route cannot be served without being in the document, nor
//! documented without being served. Paths are relative to `/api/v1`.

use crate::{AppState, actions, automation, messaging, rest, session_context, sse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every documented route of `/api/v1`, with its operations.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(actions::list))
        .routes(routes!(actions::invoke))
        .routes(routes!(rest::list_agents))
        .routes(routes!(rest::get_agent))
        .routes(routes!(rest::agent_capabilities))
        .routes(routes!(sse::agent_events))
        .routes(routes!(rest::flush))
        .routes(routes!(rest::input))
        .routes(routes!(rest::interrupt_agent))
        .routes(routes!(rest::agent_output))
        .routes(routes!(rest::pause))
        .routes(routes!(rest::list_permissions))
        .routes(routes!(rest::approve))
        .routes(routes!(rest::deny))
        .routes(routes!(rest::list_questions))
        .routes(routes!(rest::answer))
        .routes(routes!(rest::resume))
        .routes(routes!(rest::stop))
        .routes(routes!(rest::audit))
        .routes(routes!(messaging::list_channels, messaging::create_channel))
        .routes(routes!(sse::channel_events))
        .routes(routes!(messaging::history))
        .routes(routes!(messaging::join))
        .routes(routes!(messaging::leave))
        .routes(routes!(messaging::members))
        .routes(routes!(actions::list_proposals, actions::propose))
        .routes(routes!(actions::get_proposal))
        .routes(routes!(actions::cancel_proposal))
        .routes(routes!(rest::costs))
        .routes(routes!(rest::budgets))
        .routes(routes!(rest::list_deliveries))
        .routes(routes!(rest::get_delivery))
        .routes(routes!(rest::cancel_delivery))
        .routes(routes!(rest::retry_delivery))
        .routes(routes!(rest::query_events))
        .routes(routes!(sse::all_events))
        .routes(routes!(rest::hosts))
        .routes(routes!(rest::list_keys, rest::create_key))
        .routes(routes!(rest::revoke_key))
        .routes(routes!(messaging::search, messaging::send))
        .routes(routes!(messaging::get))
        .routes(routes!(messaging::thread))
        .routes(routes!(rest::all_permissions))
        .routes(routes!(rest::all_questions))
        .routes(routes!(automation::list_schedules, automation::create_schedule))
        .routes(routes!(automation::delete_schedule, automation::get_schedule))
        .routes(routes!(automation::pause_schedule))
        .routes(routes!(automation::resume_schedule))
        .routes(routes!(automation::schedule_runs))
        .routes(routes!(rest::list_sessions, rest::create_session))
        .routes(routes!(rest::session_counts))
        .routes(routes!(rest::search_sessions))
        .routes(routes!(rest::end_session, rest::get_session, rest::update_session))
        .routes(routes!(session_context::swap_agent))
        .routes(routes!(rest::archive_session))
        .routes(routes!(session_context::observe_client))
        .routes(routes!(rest::close_session))
        .routes(routes!(session_context::compress))
        .routes(routes!(rest::context_window))
        .routes(routes!(sse::session_events))
        .routes(routes!(rest::fork_session))
        .routes(routes!(rest::interrupt_session))
        .routes(routes!(rest::send_message))
        .routes(routes!(rest::purge_session))
        .routes(routes!(session_context::request_compression))
        .routes(routes!(rest::resume_session))
        .routes(routes!(session_context::system_prompt))
        .routes(routes!(rest::list_turns))
        .routes(routes!(rest::cancel_turn))
        .routes(routes!(automation::list_webhooks, automation::create_webhook))
        .routes(routes!(
            automation::delete_webhook,
            automation::get_webhook,
            automation::update_webhook
        ))
        .routes(routes!(automation::webhook_deliveries))
        .routes(routes!(automation::replay))
        .routes(routes!(rest::list_workspaces, rest::create_workspace))
        .routes(routes!(rest::delete_workspace, rest::get_workspace))
        .routes(routes!(rest::set_delivery_policy))
        .routes(routes!(session_context::list_personas))
        .routes(routes!(
            session_context::put_persona,
            session_context::get_persona,
            session_context::delete_persona
        ))
        .routes(routes!(session_context::list_profiles))
        .routes(routes!(
            session_context::put_profile,
            session_context::get_profile,
            session_context::delete_profile
        ))
}
