//! REST for actions: what agents expose for each other and for people to invoke.

use crate::AppState;
use crate::rest::{Json, Query, Reply, call};
use axum::extract::State;
use relay_contracts::WireError;
use relay_contracts::actions::*;
use relay_contracts::rpc;

#[utoipa::path(get, path = "/actions", tag = "actions", params(ListActionsRequest), responses((status = 200, description = "The live agents' actions this key may invoke (availableTo)", body = ActionList), (status = 404, description = "Unknown agent", body = WireError), (status = 400, description = "Invalid request", body = WireError), (status = 401, description = "Missing or wrong bearer token", body = WireError), (status = 503, description = "A service is unavailable", body = WireError), (status = 504, description = "A service did not answer in time", body = WireError)))]
pub async fn list(State(s): State<AppState>, Query(q): Query<ListActionsRequest>) -> Reply<ActionList> {
    Ok(Json(call::<rpc::ActionList>(&s, &q).await?))
}
