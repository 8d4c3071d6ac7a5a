//! REST for relay messaging: `POST /messages` and the channels. The sender is the key the
//! request authenticated with; a body that names one (`from`) is refused like any unknown field.

use crate::extract::{Json, Path, Query, Reply, parse};
use crate::ops::call;
use crate::responses::{BadRequest, NotFound, Timeout, Unauthorized, Unavailable, ViewerKey};
use crate::{ApiError, AppState};
use axum::extract::State;
use axum::http::StatusCode;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::messaging::*;
use relay_contracts::rpc;
use serde::{Deserialize, Serialize};

#[utoipa::path(post, path = "/messages", tag = "messages", request_body = SendRequest, responses((status = 201, body = SendResponse), (status = 200, description = "A retry with the same idempotency key: what the first send stored", body = SendResponse), (status = 400, description = "Invalid request (a `from` field included: the sender is the key)", body = WireError), (status = 404, description = "Unknown handle, channel or thread", body = WireError), (status = 409, description = "A guard refused it (recipients, the reply loop guard)", body = WireError), (status = 422, description = "The recipient cannot take it (capability_unsupported)", body = WireError), Unauthorized, ViewerKey, (status = 503, description = "The conversation's rate limit (Retry-After) or a service is unavailable", body = WireError), Timeout))]
pub async fn send(State(s): State<AppState>, body: Bytes) -> Result<(StatusCode, Json<SendResponse>), ApiError> {
    let req: SendRequest = parse(&body)?;
    let sent = call::<rpc::MessageSend>(&s, &req).await?;
    let status = if sent.duplicate {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(sent)))
}

#[utoipa::path(get, path = "/messages", tag = "messages", params(SearchMessagesRequest), responses((status = 200, body = MessagePage), BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn search(State(s): State<AppState>, Query(q): Query<SearchMessagesRequest>) -> Reply<MessagePage> {
    Ok(Json(call::<rpc::MessageSearch>(&s, &q).await?))
}

#[utoipa::path(get, path = "/messages/{id}", tag = "messages", params(("id" = String, Path, description = "Relay message id")), responses((status = 200, body = RelayMessage), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn get(State(s): State<AppState>, Path(message_id): Path<String>) -> Reply<RelayMessage> {
    Ok(Json(call::<rpc::MessageGet>(&s, &MessageRef { message_id }).await?))
}

#[utoipa::path(get, path = "/messages/{id}/thread", tag = "messages", params(("id" = String, Path, description = "Any message of the thread")), responses((status = 200, body = ThreadResponse), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn thread(State(s): State<AppState>, Path(message_id): Path<String>) -> Reply<ThreadResponse> {
    Ok(Json(call::<rpc::MessageThread>(&s, &MessageRef { message_id }).await?))
}

#[utoipa::path(post, path = "/channels", tag = "messages", request_body = CreateChannelRequest, responses((status = 201, body = Channel), BadRequest, (status = 409, description = "The channel exists", body = WireError), Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn create_channel(State(s): State<AppState>, body: Bytes) -> Result<(StatusCode, Json<Channel>), ApiError> {
    let req: CreateChannelRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::ChannelCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/channels", tag = "messages", responses((status = 200, body = ChannelList), Unauthorized, Unavailable, Timeout))]
pub async fn list_channels(State(s): State<AppState>) -> Reply<ChannelList> {
    Ok(Json(call::<rpc::ChannelList>(&s, &ListChannelsRequest {}).await?))
}

#[utoipa::path(get, path = "/channels/{name}/members", tag = "messages", params(("name" = String, Path, description = "Channel name (without #)", max_length = 40, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")), responses((status = 200, body = MemberList), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn members(State(s): State<AppState>, Path(channel): Path<String>) -> Reply<MemberList> {
    Ok(Json(call::<rpc::ChannelMembers>(&s, &ChannelRef { channel }).await?))
}

/// Whom a person adds to or removes from a channel.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Membership {
    /// The agent: a handle (`@bob`) or an agent id.
    #[schema(min_length = 1, max_length = 256)]
    pub agent: String,
}

#[utoipa::path(post, path = "/channels/{name}/join", tag = "messages", params(("name" = String, Path, description = "Channel name (without #)", max_length = 40, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")), request_body = Membership, responses((status = 200, body = MemberList), NotFound, (status = 409, description = "#general: every live agent is in it", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn join(State(s): State<AppState>, Path(channel): Path<String>, body: Bytes) -> Reply<MemberList> {
    membership::<rpc::ChannelJoin>(&s, channel, &body).await
}

#[utoipa::path(post, path = "/channels/{name}/leave", tag = "messages", params(("name" = String, Path, description = "Channel name (without #)", max_length = 40, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")), request_body = Membership, responses((status = 200, body = MemberList), NotFound, (status = 409, description = "#general: every live agent is in it", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn leave(State(s): State<AppState>, Path(channel): Path<String>, body: Bytes) -> Reply<MemberList> {
    membership::<rpc::ChannelLeave>(&s, channel, &body).await
}

/// `join` or `leave` for the agent the body names.
async fn membership<R>(s: &AppState, channel: String, body: &Bytes) -> Reply<MemberList>
where
    R: relay_contracts::Rpc<Request = MembershipRequest, Response = MemberList>,
{
    let m: Membership = parse(body)?;
    let req = MembershipRequest {
        channel,
        agent: Some(m.agent),
    };
    Ok(Json(call::<R>(s, &req).await?))
}

/// A page of a channel's history.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryQuery {
    /// Only messages after this seq (a previous page's `nextCursor`).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<i64>,
}

#[utoipa::path(get, path = "/channels/{name}/history", tag = "messages", params(("name" = String, Path, description = "Channel name (without #)", max_length = 40, pattern = "^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"), HistoryQuery), responses((status = 200, body = MessagePage), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn history(
    State(s): State<AppState>,
    Path(channel): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> Reply<MessagePage> {
    let req = HistoryRequest {
        channel,
        after: q.after,
        limit: q.limit,
    };
    Ok(Json(call::<rpc::ChannelHistory>(&s, &req).await?))
}
