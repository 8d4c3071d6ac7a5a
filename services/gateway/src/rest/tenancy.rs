//! `/keys` and `/workspaces`: API keys, workspaces and their delivery policy.

use crate::extract::{Json, Path, Query, Reply, parse};
use crate::ops::call;
use crate::responses::{BadRequest, NotAdmin, NotFound, RateLimited, Timeout, Unauthorized, Unavailable};
use crate::{ApiError, AppState};
use axum::extract::State;
use axum::http::StatusCode;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::keys::{ApiKey, CreateKeyRequest, CreatedKey, KeyList, KeyRef, ListKeysRequest};
use relay_contracts::rpc;
use relay_contracts::workspace::{
    CreateWorkspaceRequest, DeliveryPolicy, ListWorkspacesRequest, SetDeliveryPolicyRequest, Workspace,
    WorkspaceDeleted, WorkspaceList, WorkspaceRef,
};
use serde::Deserialize;

#[utoipa::path(post, path = "/keys", tag = "keys", request_body = CreateKeyRequest, responses((status = 201, description = "The key and its token, shown this once", body = CreatedKey), BadRequest, (status = 404, description = "No such workspace", body = WireError), Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn create_key(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<CreatedKey>), ApiError> {
    let req: CreateKeyRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::KeyCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/keys", tag = "keys", params(("includeRevoked" = Option<bool>, Query, description = "Revoked keys too")), responses((status = 200, body = KeyList), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn list_keys(State(s): State<AppState>, Query(q): Query<KeysQuery>) -> Reply<KeyList> {
    let req = ListKeysRequest {
        workspace: None,
        include_revoked: q.include_revoked,
    };
    Ok(Json(call::<rpc::KeyList>(&s, &req).await?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeysQuery {
    include_revoked: Option<bool>,
}

#[utoipa::path(delete, path = "/keys/{id}", tag = "keys", params(("id" = String, Path, description = "Key id")), responses((status = 200, description = "The key, revoked", body = ApiKey), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn revoke_key(State(s): State<AppState>, Path(id): Path<String>) -> Reply<ApiKey> {
    Ok(Json(call::<rpc::KeyRevoke>(&s, &KeyRef { key_id: id }).await?))
}

#[utoipa::path(post, path = "/workspaces", tag = "workspaces", request_body = CreateWorkspaceRequest, responses((status = 201, body = Workspace), BadRequest, Unauthorized, (status = 403, description = "Not an admin key of default", body = WireError), (status = 409, description = "The workspace exists", body = WireError), RateLimited, Unavailable, Timeout))]
pub(crate) async fn create_workspace(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Workspace>), ApiError> {
    let req: CreateWorkspaceRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::WorkspaceCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/workspaces", tag = "workspaces", responses((status = 200, body = WorkspaceList), BadRequest, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn list_workspaces(State(s): State<AppState>) -> Reply<WorkspaceList> {
    Ok(Json(call::<rpc::WorkspaceList>(&s, &ListWorkspacesRequest {}).await?))
}

#[utoipa::path(get, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), responses((status = 200, body = Workspace), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn get_workspace(State(s): State<AppState>, Path(name): Path<String>) -> Reply<Workspace> {
    Ok(Json(call::<rpc::WorkspaceGet>(&s, &WorkspaceRef { name }).await?))
}

#[utoipa::path(delete, path = "/workspaces/{name}", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), responses((status = 200, description = "Deleted: its keys revoked, not found from now on", body = WorkspaceDeleted), BadRequest, NotFound, (status = 409, description = "It has live agents (stop them first), or it is `default`", body = WireError), Unauthorized, (status = 403, description = "Not an admin key of default", body = WireError), RateLimited, Unavailable, Timeout))]
pub(crate) async fn delete_workspace(State(s): State<AppState>, Path(name): Path<String>) -> Reply<WorkspaceDeleted> {
    Ok(Json(call::<rpc::WorkspaceDelete>(&s, &WorkspaceRef { name }).await?))
}

#[utoipa::path(put, path = "/workspaces/{name}/delivery-policy", tag = "workspaces", params(("name" = String, Path, description = "Workspace name")), request_body = DeliveryPolicy, responses((status = 200, description = "The workspace with its new policy; sends from now on follow it", body = Workspace), BadRequest, NotFound, Unauthorized, NotAdmin, RateLimited, Unavailable, Timeout))]
pub(crate) async fn set_delivery_policy(
    State(s): State<AppState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Reply<Workspace> {
    let policy: DeliveryPolicy = parse(&body)?;
    let req = SetDeliveryPolicyRequest {
        name,
        delivery_policy: Some(policy),
    };
    Ok(Json(call::<rpc::WorkspaceSetDeliveryPolicy>(&s, &req).await?))
}
