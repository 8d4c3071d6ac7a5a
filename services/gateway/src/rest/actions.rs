//! REST for actions (what agents expose for each other and for people to invoke) and for
//! consensus (questions put to agents, who vote).

use crate::AppState;
use crate::extract::{Json, Path, Query, Reply, optional_body, parse};
use crate::ops::call;
use crate::responses::{BadRequest, NotFound, Timeout, Unauthorized, Unavailable, ViewerKey};
use crate::rest::Reason;
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::actions::*;
use relay_contracts::rpc;

#[utoipa::path(post, path = "/actions/invoke", tag = "actions", request_body = InvokeRequest, responses((status = 200, description = "The invocation, completed or failed (the agent's error, or no answer within timeoutMs)", body = Invocation), (status = 400, description = "Invalid request, or an input the action's schema refuses (details.errors)", body = WireError), (status = 404, description = "Unknown agent or action", body = WireError), (status = 409, description = "The same invocationId is still running", body = WireError), Unauthorized, (status = 403, description = "A viewer key, or a key the action is not available to", body = WireError), Unavailable, Timeout))]
pub async fn invoke(State(s): State<AppState>, body: Bytes) -> Reply<Invocation> {
    let req: InvokeRequest = parse(&body)?;
    Ok(Json(call::<rpc::ActionInvoke>(&s, &req).await?))
}

#[utoipa::path(get, path = "/actions", tag = "actions", params(ListActionsRequest), responses((status = 200, description = "The live agents' actions this key may invoke (availableTo)", body = ActionList), (status = 404, description = "Unknown agent", body = WireError), BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn list(State(s): State<AppState>, Query(q): Query<ListActionsRequest>) -> Reply<ActionList> {
    Ok(Json(call::<rpc::ActionList>(&s, &q).await?))
}

// ---- consensus ----------------------------------------------------------------------------

use relay_contracts::consensus::*;

#[utoipa::path(post, path = "/consensus", tag = "consensus", request_body = ProposeRequest, responses((status = 200, description = "The open proposal; its voters were asked with a relay message from this key (the same proposalId again answers with it)", body = Proposal), (status = 400, description = "Invalid request (options, quorum, timeoutMs)", body = WireError), (status = 404, description = "Unknown handle or channel", body = WireError), (status = 409, description = "The proposalId is taken, or the channel or session has no agent to vote (or too many)", body = WireError), Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn propose(State(s): State<AppState>, body: Bytes) -> Reply<Proposal> {
    let req: ProposeRequest = parse(&body)?;
    Ok(Json(call::<rpc::ConsensusPropose>(&s, &req).await?))
}

#[utoipa::path(get, path = "/consensus", tag = "consensus", params(ListProposalsRequest), responses((status = 200, description = "The workspace's proposals, newest first", body = ProposalList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn list_proposals(State(s): State<AppState>, Query(q): Query<ListProposalsRequest>) -> Reply<ProposalList> {
    Ok(Json(call::<rpc::ConsensusList>(&s, &q).await?))
}

#[utoipa::path(get, path = "/consensus/{id}", tag = "consensus", params(("id" = String, Path, description = "Proposal id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, description = "The proposal with its votes and tally", body = Proposal), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn get_proposal(State(s): State<AppState>, Path(proposal_id): Path<String>) -> Reply<Proposal> {
    Ok(Json(call::<rpc::ConsensusGet>(&s, &ProposalRef { proposal_id }).await?))
}

#[utoipa::path(post, path = "/consensus/{id}/cancel", tag = "consensus", params(("id" = String, Path, description = "Proposal id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), request_body(content = Option<Reason>), responses((status = 200, description = "The cancelled proposal", body = Proposal), NotFound, (status = 409, description = "It is no longer open", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn cancel_proposal(
    State(s): State<AppState>,
    Path(proposal_id): Path<String>,
    body: Bytes,
) -> Reply<Proposal> {
    let Reason { reason } = optional_body(&body)?;
    let req = CancelRequest { proposal_id, reason };
    Ok(Json(call::<rpc::ConsensusCancel>(&s, &req).await?))
}
