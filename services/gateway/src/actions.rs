//! REST for actions: what agents expose for each other and for people to invoke.

use crate::AppState;
use crate::rest::{Json, Query, Reply, call, parse};
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::actions::*;
use relay_contracts::rpc;

#[utoipa::path(post, path = "/actions/invoke", tag = "actions", request_body = InvokeRequest, responses((status = 200, description = "The invocation, completed or failed (the agent's error, or no answer within timeoutMs)", body = Invocation), (status = 400, description = "Invalid request, or an input the action's schema refuses (details.errors)", body = WireError), (status = 404, description = "Unknown agent or action", body = WireError), (status = 409, description = "The same invocationId is still running", body = WireError), (status = 401, description = "Missing or wrong bearer token", body = WireError), (status = 403, description = "A viewer key, or a key the action is not available to", body = WireError), (status = 503, description = "A service is unavailable", body = WireError), (status = 504, description = "A service did not answer in time", body = WireError)))]
pub async fn invoke(State(s): State<AppState>, body: Bytes) -> Reply<Invocation> {
    let req: InvokeRequest = parse(&body)?;
    Ok(Json(call::<rpc::ActionInvoke>(&s, &req).await?))
}

#[utoipa::path(get, path = "/actions", tag = "actions", params(ListActionsRequest), responses((status = 200, description = "The live agents' actions this key may invoke (availableTo)", body = ActionList), (status = 404, description = "Unknown agent", body = WireError), (status = 400, description = "Invalid request", body = WireError), (status = 401, description = "Missing or wrong bearer token", body = WireError), (status = 503, description = "A service is unavailable", body = WireError), (status = 504, description = "A service did not answer in time", body = WireError)))]
pub async fn list(State(s): State<AppState>, Query(q): Query<ListActionsRequest>) -> Reply<ActionList> {
    Ok(Json(call::<rpc::ActionList>(&s, &q).await?))
}
