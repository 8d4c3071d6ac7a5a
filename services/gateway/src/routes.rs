//! The documented API: each route declared with its OpenAPI operation (the handler's
//! `#[utoipa::path]`), so a route cannot be served without being in the document, nor
//! documented without being served. Paths are relative to `/api/v1`.

use crate::rest::{
    actions, agents, automation, deliveries, messaging, permissions, reports, session_context, sessions, tenancy,
};
use crate::{AppState, sse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Every documented route of `/api/v1`, with its operations.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::default()
        .routes(routes!(actions::list))
        .routes(routes!(actions::invoke))
        .routes(routes!(agents::list_agents))
        .routes(routes!(agents::get_agent))
        .routes(routes!(agents::agent_capabilities))
        .routes(routes!(sse::agent_events))
        .routes(routes!(agents::flush))
        .routes(routes!(agents::input))
        .routes(routes!(agents::interrupt_agent))
        .routes(routes!(agents::agent_output))
        .routes(routes!(agents::pause))
        .routes(routes!(permissions::list_permissions))
        .routes(routes!(permissions::approve))
        .routes(routes!(permissions::deny))
        .routes(routes!(permissions::list_questions))
        .routes(routes!(permissions::answer))
        .routes(routes!(agents::resume))
        .routes(routes!(agents::stop))
        .routes(routes!(reports::audit))
        .routes(routes!(messaging::list_channels, messaging::create_channel))
        .routes(routes!(sse::channel_events))
        .routes(routes!(messaging::history))
        .routes(routes!(messaging::join))
        .routes(routes!(messaging::leave))
        .routes(routes!(messaging::members))
        .routes(routes!(actions::list_proposals, actions::propose))
        .routes(routes!(actions::get_proposal))
        .routes(routes!(actions::cancel_proposal))
        .routes(routes!(reports::costs))
        .routes(routes!(reports::budgets))
        .routes(routes!(deliveries::list_deliveries))
        .routes(routes!(deliveries::get_delivery))
        .routes(routes!(deliveries::cancel_delivery))
        .routes(routes!(deliveries::retry_delivery))
        .routes(routes!(reports::query_events))
        .routes(routes!(sse::all_events))
        .routes(routes!(reports::hosts))
        .routes(routes!(tenancy::list_keys, tenancy::create_key))
        .routes(routes!(tenancy::revoke_key))
        .routes(routes!(messaging::search, messaging::send))
        .routes(routes!(messaging::get))
        .routes(routes!(messaging::thread))
        .routes(routes!(permissions::all_permissions))
        .routes(routes!(permissions::all_questions))
        .routes(routes!(automation::list_schedules, automation::create_schedule))
        .routes(routes!(automation::delete_schedule, automation::get_schedule))
        .routes(routes!(automation::pause_schedule))
        .routes(routes!(automation::resume_schedule))
        .routes(routes!(automation::schedule_runs))
        .routes(routes!(sessions::list_sessions, sessions::create_session))
        .routes(routes!(sessions::session_counts))
        .routes(routes!(sessions::search_sessions))
        .routes(routes!(
            sessions::end_session,
            sessions::get_session,
            sessions::update_session
        ))
        .routes(routes!(session_context::swap_agent))
        .routes(routes!(sessions::archive_session))
        .routes(routes!(session_context::observe_client))
        .routes(routes!(sessions::close_session))
        .routes(routes!(session_context::compress))
        .routes(routes!(reports::context_window))
        .routes(routes!(sse::session_events))
        .routes(routes!(sessions::fork_session))
        .routes(routes!(agents::interrupt_session))
        .routes(routes!(sessions::send_message))
        .routes(routes!(sessions::purge_session))
        .routes(routes!(session_context::request_compression))
        .routes(routes!(sessions::resume_session))
        .routes(routes!(session_context::system_prompt))
        .routes(routes!(agents::list_turns))
        .routes(routes!(agents::cancel_turn))
        .routes(routes!(automation::list_webhooks, automation::create_webhook))
        .routes(routes!(
            automation::delete_webhook,
            automation::get_webhook,
            automation::update_webhook
        ))
        .routes(routes!(automation::webhook_deliveries))
        .routes(routes!(automation::replay))
        .routes(routes!(tenancy::list_workspaces, tenancy::create_workspace))
        .routes(routes!(tenancy::delete_workspace, tenancy::get_workspace))
        .routes(routes!(tenancy::set_delivery_policy))
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
