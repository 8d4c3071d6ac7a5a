//! REST for webhooks (the workspace's events posted to URLs, signed the Standard Webhooks way)
//! and schedules (messages and sessions at a time or on a cron expression).

use crate::AppState;
use crate::extract::{Json, Path, Query, Reply, parse};
use crate::ops::call;
use crate::responses::{BadRequest, NotAdmin, NotFound, Timeout, Unauthorized, Unavailable, ViewerKey};
use axum::extract::State;
use axum::http::StatusCode;
use bytes::Bytes;
use relay_contracts::WireError;
use relay_contracts::automation::*;
use relay_contracts::rpc;
use serde::Deserialize;

#[utoipa::path(post, path = "/webhooks", tag = "webhooks", request_body = CreateWebhookRequest, responses((status = 201, description = "The subscription with its signing secret, shown this once", body = Webhook), (status = 400, description = "Invalid request: a URL that is not http(s) or aims at a loopback, link-local or private address, an unknown secret format", body = WireError), Unauthorized, NotAdmin, Unavailable, Timeout))]
pub async fn create_webhook(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Webhook>), crate::ApiError> {
    let req: CreateWebhookRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::WebhookCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/webhooks", tag = "webhooks", responses((status = 200, description = "The workspace's subscriptions (secrets not shown)", body = WebhookList), Unauthorized, Unavailable, Timeout))]
pub async fn list_webhooks(State(s): State<AppState>) -> Reply<WebhookList> {
    Ok(Json(call::<rpc::WebhookList>(&s, &ListWebhooksRequest {}).await?))
}

#[utoipa::path(get, path = "/webhooks/{id}", tag = "webhooks", params(("id" = String, Path, description = "Webhook id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = Webhook), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn get_webhook(State(s): State<AppState>, Path(webhook_id): Path<String>) -> Reply<Webhook> {
    Ok(Json(call::<rpc::WebhookGet>(&s, &WebhookRef { webhook_id }).await?))
}

/// `PATCH /webhooks/{id}`: what is given changes.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookChanges {
    #[schema(min_length = 1, max_length = 2000)]
    pub url: Option<String>,
    #[schema(max_items = 100)]
    pub events: Option<Vec<String>>,
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Enabling again clears the failure count; deliveries held meanwhile then go.
    pub enabled: Option<bool>,
}

#[utoipa::path(patch, path = "/webhooks/{id}", tag = "webhooks", params(("id" = String, Path, description = "Webhook id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), request_body = WebhookChanges, responses((status = 200, body = Webhook), NotFound, BadRequest, Unauthorized, NotAdmin, Unavailable, Timeout))]
pub async fn update_webhook(State(s): State<AppState>, Path(webhook_id): Path<String>, body: Bytes) -> Reply<Webhook> {
    let c: WebhookChanges = parse(&body)?;
    let req = UpdateWebhookRequest {
        webhook_id,
        url: c.url,
        events: c.events,
        description: c.description,
        enabled: c.enabled,
    };
    Ok(Json(call::<rpc::WebhookUpdate>(&s, &req).await?))
}

#[utoipa::path(delete, path = "/webhooks/{id}", tag = "webhooks", params(("id" = String, Path, description = "Webhook id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = Deleted), NotFound, BadRequest, Unauthorized, NotAdmin, Unavailable, Timeout))]
pub async fn delete_webhook(State(s): State<AppState>, Path(webhook_id): Path<String>) -> Reply<Deleted> {
    Ok(Json(call::<rpc::WebhookDelete>(&s, &WebhookRef { webhook_id }).await?))
}

/// `GET /webhooks/{id}/deliveries`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliveriesQuery {
    pub status: Option<WebhookDeliveryStatus>,
    /// 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

#[utoipa::path(get, path = "/webhooks/{id}/deliveries", tag = "webhooks", params(("id" = String, Path, description = "Webhook id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"), DeliveriesQuery), responses((status = 200, description = "The delivery log, newest first", body = WebhookDeliveryList), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn webhook_deliveries(
    State(s): State<AppState>,
    Path(webhook_id): Path<String>,
    Query(q): Query<DeliveriesQuery>,
) -> Reply<WebhookDeliveryList> {
    let req = WebhookDeliveriesRequest {
        webhook_id,
        status: q.status,
        limit: q.limit,
    };
    Ok(Json(call::<rpc::WebhookDeliveries>(&s, &req).await?))
}

#[utoipa::path(post, path = "/webhooks/{id}/deliveries/{deliveryId}/replay", tag = "webhooks", params(("id" = String, Path, description = "Webhook id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"), ("deliveryId" = String, Path, description = "Delivery id (its webhook-id header)", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, description = "The delivery, pending again with a fresh run of attempts", body = WebhookDelivery), NotFound, BadRequest, Unauthorized, NotAdmin, Unavailable, Timeout))]
pub async fn replay(
    State(s): State<AppState>,
    Path((webhook_id, delivery_id)): Path<(String, String)>,
) -> Reply<WebhookDelivery> {
    let req = ReplayRequest {
        webhook_id,
        delivery_id,
    };
    Ok(Json(call::<rpc::WebhookReplay>(&s, &req).await?))
}

// ---- schedules ------------------------------------------------------------------------------

#[utoipa::path(post, path = "/schedules", tag = "schedules", request_body = CreateScheduleRequest, responses((status = 201, description = "The schedule (the same scheduleId again answers with the stored one)", body = Schedule), (status = 400, description = "Invalid request: a cron expression or time zone that does not exist, both or neither of cron and at", body = WireError), (status = 409, description = "The scheduleId is taken in another workspace, or the workspace has as many schedules as allowed", body = WireError), Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn create_schedule(
    State(s): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<Schedule>), crate::ApiError> {
    let req: CreateScheduleRequest = parse(&body)?;
    Ok((StatusCode::CREATED, Json(call::<rpc::ScheduleCreate>(&s, &req).await?)))
}

#[utoipa::path(get, path = "/schedules", tag = "schedules", params(ListSchedulesRequest), responses((status = 200, description = "The workspace's schedules", body = ScheduleList), BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn list_schedules(State(s): State<AppState>, Query(q): Query<ListSchedulesRequest>) -> Reply<ScheduleList> {
    Ok(Json(call::<rpc::ScheduleList>(&s, &q).await?))
}

#[utoipa::path(get, path = "/schedules/{id}", tag = "schedules", params(("id" = String, Path, description = "Schedule id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, description = "The schedule with its last run", body = Schedule), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn get_schedule(State(s): State<AppState>, Path(schedule_id): Path<String>) -> Reply<Schedule> {
    Ok(Json(call::<rpc::ScheduleGet>(&s, &ScheduleRef { schedule_id }).await?))
}

#[utoipa::path(post, path = "/schedules/{id}/pause", tag = "schedules", params(("id" = String, Path, description = "Schedule id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = Schedule), NotFound, (status = 409, description = "It has run (a one-time schedule)", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn pause_schedule(State(s): State<AppState>, Path(schedule_id): Path<String>) -> Reply<Schedule> {
    Ok(Json(
        call::<rpc::SchedulePause>(&s, &ScheduleRef { schedule_id }).await?,
    ))
}

#[utoipa::path(post, path = "/schedules/{id}/resume", tag = "schedules", params(("id" = String, Path, description = "Schedule id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, description = "Active again, from its next time after now", body = Schedule), NotFound, (status = 409, description = "It has run (a one-time schedule)", body = WireError), BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn resume_schedule(State(s): State<AppState>, Path(schedule_id): Path<String>) -> Reply<Schedule> {
    Ok(Json(
        call::<rpc::ScheduleResume>(&s, &ScheduleRef { schedule_id }).await?,
    ))
}

#[utoipa::path(delete, path = "/schedules/{id}", tag = "schedules", params(("id" = String, Path, description = "Schedule id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$")), responses((status = 200, body = Deleted), NotFound, BadRequest, Unauthorized, ViewerKey, Unavailable, Timeout))]
pub async fn delete_schedule(State(s): State<AppState>, Path(schedule_id): Path<String>) -> Reply<Deleted> {
    Ok(Json(
        call::<rpc::ScheduleDelete>(&s, &ScheduleRef { schedule_id }).await?,
    ))
}

/// `GET /schedules/{id}/runs`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunsQuery {
    /// 1 to 500 (default 50).
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<i64>,
}

#[utoipa::path(get, path = "/schedules/{id}/runs", tag = "schedules", params(("id" = String, Path, description = "Schedule id", max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"), RunsQuery), responses((status = 200, description = "Its runs, newest first", body = ScheduleRunList), NotFound, BadRequest, Unauthorized, Unavailable, Timeout))]
pub async fn schedule_runs(
    State(s): State<AppState>,
    Path(schedule_id): Path<String>,
    Query(q): Query<RunsQuery>,
) -> Reply<ScheduleRunList> {
    let req = ScheduleRunsRequest {
        schedule_id,
        limit: q.limit,
    };
    Ok(Json(call::<rpc::ScheduleRuns>(&s, &req).await?))
}
