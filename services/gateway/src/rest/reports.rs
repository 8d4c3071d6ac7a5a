//! What happened and what it cost: `/events`, `/audit`, `/costs`, `/costs/budgets`, a
//! session's context window, and the agent hosts (`/hosts`).

use crate::AppState;
use crate::extract::{Json, Path, Query, Reply};
use crate::ops::call;
use crate::ops::events::EventsQuery;
use crate::responses::{BadRequest, NotAdmin, RateLimited, Timeout, Unauthorized, Unavailable};
use axum::extract::State;
use relay_contracts::WireError;
use relay_contracts::cost::{
    BudgetsRequest, BudgetsResponse, ContextWindowRequest, ContextWindowResponse, Report, ReportRequest,
};
use relay_contracts::events::QueryResponse;
use relay_contracts::hosts::{HostList, HostListRequest};
use relay_contracts::rpc;

#[utoipa::path(get, path = "/events", tag = "events", params(EventsQuery), responses((status = 200, body = QueryResponse), (status = 404, description = "No live agent of the workspace has this handle", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn query_events(State(s): State<AppState>, Query(q): Query<EventsQuery>) -> Reply<QueryResponse> {
    Ok(Json(crate::ops::events::query(&s, q).await?))
}

#[utoipa::path(get, path = "/costs", tag = "costs", params(ReportRequest), responses((status = 200, body = Report), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn costs(State(s): State<AppState>, Query(q): Query<ReportRequest>) -> Reply<Report> {
    Ok(Json(call::<rpc::CostReport>(&s, &q).await?))
}

#[utoipa::path(get, path = "/costs/budgets", tag = "costs", responses((status = 200, body = BudgetsResponse), Unauthorized, Unavailable, Timeout))]
pub(crate) async fn budgets(State(s): State<AppState>) -> Reply<BudgetsResponse> {
    Ok(Json(call::<rpc::CostBudgets>(&s, &BudgetsRequest {}).await?))
}

/// The agent hosts (one per agent-spawner): labels, capacity, load, status.
#[utoipa::path(get, path = "/hosts", tag = "agents", params(HostListRequest), responses((status = 200, body = HostList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn hosts(State(s): State<AppState>, Query(q): Query<HostListRequest>) -> Reply<HostList> {
    Ok(Json(call::<rpc::HostList>(&s, &q).await?))
}

/// Seed 002 `getContextWindowState`: `state` is null until the session has reported usage.
#[utoipa::path(get, path = "/sessions/{id}/context-window", tag = "costs", params(("id" = String, Path, description = "Session id")), responses((status = 200, body = ContextWindowResponse), BadRequest, Unauthorized, (status = 404, description = "Not found (or in another workspace)", body = WireError), Unavailable, Timeout))]
pub(crate) async fn context_window(State(s): State<AppState>, Path(id): Path<String>) -> Reply<ContextWindowResponse> {
    let req = ContextWindowRequest { session_id: id };
    Ok(Json(call::<rpc::SessionGetContextWindowState>(&s, &req).await?))
}

#[utoipa::path(get, path = "/audit", tag = "audit", params(relay_contracts::audit::ListAuditRequest), responses((status = 200, description = "`audit.recorded` events of the key's workspace, oldest first", body = QueryResponse), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn audit(
    State(s): State<AppState>,
    Query(q): Query<relay_contracts::audit::ListAuditRequest>,
) -> Reply<QueryResponse> {
    Ok(Json(call::<rpc::AuditList>(&s, &q).await?))
}
