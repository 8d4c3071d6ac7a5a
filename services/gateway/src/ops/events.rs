//! Reading the event log as the caller: what REST and the MCP tools both do.

use super::call;
use crate::{ApiError, AppState};
use relay_contracts::events::{QueryRequest, QueryResponse};
use relay_contracts::rpc;
use relay_contracts::session::{AgentGetRequest, handle_of};
use serde::Deserialize;

/// `GET /api/v1/events`: a page of the log, oldest first; pass `nextCursor` back as `cursor`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsQuery {
    /// Comma-separated event types.
    pub types: Option<String>,
    /// An agent: its id, or its handle (`@bob` or `bob`) among the workspace's live agents
    /// (404 when no live agent has it).
    pub agent: Option<String>,
    pub session_id: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// At most `ingest.max_page_size` (10,000 by default).
    #[param(minimum = 1, maximum = 10000)]
    pub limit: Option<i64>,
    pub cursor: Option<i64>,
    /// Newest first; `cursor` then means "older than".
    pub newest_first: Option<bool>,
}

/// The id the log keeps an agent's events under: a handle (`@bob` or `bob`) is resolved among
/// the caller's workspace's live agents (`not_found` otherwise, never an empty page); anything
/// longer than a handle is an id already.
pub(crate) async fn agent_id_of(s: &AppState, name: String) -> Result<String, ApiError> {
    if handle_of(&name).is_none() {
        return Ok(name);
    }
    Ok(call::<rpc::AgentGet>(s, &AgentGetRequest { agent: name })
        .await?
        .agent_id)
}

/// `GET /events`: a page of the log, an agent named by id or handle.
pub(crate) async fn query(s: &AppState, q: EventsQuery) -> Result<QueryResponse, ApiError> {
    let agent = match q.agent {
        Some(name) => Some(agent_id_of(s, name).await?),
        None => None,
    };
    let req = QueryRequest {
        types: q.types.map(|t| {
            t.split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()
        }),
        agents: agent.map(|a| vec![a]),
        session_ids: q.session_id.map(|s| vec![s]),
        since: q.since,
        until: q.until,
        limit: q.limit,
        cursor: q.cursor,
        newest_first: q.newest_first,
    };
    call::<rpc::EventQuery>(s, &req).await
}
