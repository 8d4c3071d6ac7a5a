//! `/deliveries`: list, get, retry, cancel.

use crate::AppState;
use crate::extract::{Json, Path, Query, Reply, optional_body};
use crate::ops::call;
use crate::responses::{BadRequest, Conflict, NotFound, Timeout, Unauthorized, Unavailable};
use crate::rest::Reason;
use axum::extract::State;
use bytes::Bytes;
use relay_contracts::delivery::{
    CancelDeliveryRequest, Delivery, DeliveryRef, ListDeliveriesRequest, ListDeliveriesResponse,
};
use relay_contracts::rpc;

#[utoipa::path(get, path = "/deliveries", tag = "deliveries", params(ListDeliveriesRequest), responses((status = 200, body = ListDeliveriesResponse), BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn list_deliveries(
    State(s): State<AppState>,
    Query(q): Query<ListDeliveriesRequest>,
) -> Reply<ListDeliveriesResponse> {
    Ok(Json(call::<rpc::DeliveryList>(&s, &q).await?))
}

#[utoipa::path(get, path = "/deliveries/{id}", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), responses((status = 200, body = Delivery), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn get_delivery(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Delivery> {
    Ok(Json(
        call::<rpc::DeliveryGet>(&s, &DeliveryRef { delivery_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/deliveries/{id}/retry", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), responses((status = 200, body = Delivery), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn retry_delivery(State(s): State<AppState>, Path(id): Path<String>) -> Reply<Delivery> {
    Ok(Json(
        call::<rpc::DeliveryRetry>(&s, &DeliveryRef { delivery_id: id }).await?,
    ))
}

#[utoipa::path(post, path = "/deliveries/{id}/cancel", tag = "deliveries", params(("id" = String, Path, description = "Delivery id")), request_body(content = Option<Reason>), responses((status = 200, body = Delivery), NotFound, Conflict, BadRequest, Unauthorized, Unavailable, Timeout))]
pub(crate) async fn cancel_delivery(State(s): State<AppState>, Path(id): Path<String>, body: Bytes) -> Reply<Delivery> {
    let Reason { reason } = optional_body(&body)?;
    let req = CancelDeliveryRequest {
        delivery_id: id,
        reason,
    };
    Ok(Json(call::<rpc::DeliveryCancel>(&s, &req).await?))
}
