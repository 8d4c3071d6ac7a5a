//! `webhook.*`: a workspace's subscriptions and their delivery logs. Every query names the
//! caller's workspace, so another workspace's subscription is `not_found`.

use crate::error::{AutomationError, Result};
use crate::{Automation, check_id, guard, new_id};
use base64::Engine;
use relay_contracts::RequestContext;
use relay_contracts::a2a::A2aTaskPush;
use relay_contracts::automation::*;
use sqlx::types::Json;

const COLUMNS: &str = "webhook_id, url, event_types, description, enabled, disabled_reason,
    consecutive_failures::bigint, created_by, created_at, updated_at, a2a_task";

type Row = (
    String,
    String,
    Vec<String>,
    Option<String>,
    bool,
    Option<String>,
    i64,
    String,
    i64,
    i64,
    Option<Json<A2aTaskPush>>,
);

fn from_row(r: Row) -> Webhook {
    Webhook {
        webhook_id: r.0,
        url: r.1,
        events: r.2,
        description: r.3,
        enabled: r.4,
        disabled_reason: r.5,
        consecutive_failures: r.6,
        secret: None,
        a2a_task: r.10.map(|j| j.0),
        created_by: r.7,
        created_at: r.8,
        updated_at: r.9,
    }
}

const MAX_EVENT_TYPES: usize = 100;

fn check_events(events: Option<Vec<String>>) -> Result<Vec<String>> {
    let events = events.unwrap_or_else(|| {
        DEFAULT_WEBHOOK_EVENTS
            .iter()
            .map(std::string::ToString::to_string)
            .collect()
    });
    if events.is_empty() || events.len() > MAX_EVENT_TYPES {
        return Err(AutomationError::Invalid(format!(
            "events: 1 to {MAX_EVENT_TYPES} event types, or [\"*\"] for all"
        )));
    }
    for e in &events {
        let ok = e == "*"
            || (!e.is_empty() && e.len() <= 128 && e.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
        if !ok {
            return Err(AutomationError::Invalid(format!(
                "events: {e:?} is not an event type (letters, digits, '.', '_', '-') or \"*\""
            )));
        }
    }
    Ok(events)
}

fn check_description(d: &Option<String>) -> Result<()> {
    match d {
        Some(d) if d.chars().count() > 500 || d.contains('\0') => Err(AutomationError::Invalid(
            "description: at most 500 characters, without NUL".into(),
        )),
        _ => Ok(()),
    }
}

fn check_url(a: &Automation, url: &str) -> Result<()> {
    if url.len() > 2000 {
        return Err(AutomationError::Invalid("url: at most 2000 characters".into()));
    }
    guard::check_url(url, a.webhooks.allow_private).map_err(AutomationError::Invalid)
}

/// An A2A push follows a task of an agent the caller sees (asked as the caller, so another
/// workspace's agent is not found), in that agent's session.
async fn check_a2a_task(a: &Automation, push: &A2aTaskPush) -> Result<()> {
    push.check().map_err(AutomationError::Invalid)?;
    let req = relay_contracts::session::AgentGetRequest {
        agent: push.task.agent_id.clone(),
    };
    let timeout = std::time::Duration::from_secs(5);
    let agent = relay_bus::client::call::<relay_contracts::rpc::AgentGet>(&a.nats, &req, timeout)
        .await
        .map_err(|e| match e.code() {
            relay_contracts::ErrorCode::NotFound => AutomationError::NotFound(format!("no task {}", push.task.id())),
            _ => AutomationError::Upstream(e),
        })?;
    if agent.session_id != push.task.session_id {
        return Err(AutomationError::NotFound(format!("no task {}", push.task.id())));
    }
    Ok(())
}

/// A secret given by the client must decode like the ones made here.
fn check_secret(secret: &str) -> Result<()> {
    let key = secret
        .strip_prefix("whsec_")
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok());
    match key {
        Some(k) if (24..=64).contains(&k.len()) => Ok(()),
        _ => Err(AutomationError::Invalid(
            "secret: whsec_ followed by the base64 of 24 to 64 bytes".into(),
        )),
    }
}

fn make_secret() -> String {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(key))
}

async fn find(a: &Automation, ctx: &RequestContext, id: &str) -> Result<Webhook> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM webhook_subscriptions WHERE webhook_id = $1 AND workspace = $2"
    )))
    .bind(id)
    .bind(&ctx.workspace)
    .fetch_optional(&a.db)
    .await?;
    row.map(from_row)
        .ok_or_else(|| AutomationError::NotFound(format!("webhook {id} not found")))
}

pub async fn create(a: Automation, ctx: RequestContext, req: CreateWebhookRequest) -> Result<Webhook> {
    check_url(&a, &req.url)?;
    let events = match &req.a2a_task {
        // A task push folds every event of the task's session.
        Some(push) => {
            check_a2a_task(&a, push).await?;
            vec!["*".to_string()]
        }
        None => check_events(req.events)?,
    };
    check_description(&req.description)?;
    let secret = match req.secret {
        Some(s) => {
            check_secret(&s)?;
            s
        }
        None => make_secret(),
    };
    let id = new_id("wh");
    let now = relay_bus::now_ms();
    let row: Row = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO webhook_subscriptions (webhook_id, workspace, url, event_types, secret, description, created_by, created_at, updated_at, a2a_task)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING {COLUMNS}"
    )))
    .bind(&id)
    .bind(&ctx.workspace)
    .bind(&req.url)
    .bind(&events)
    .bind(&secret)
    .bind(&req.description)
    .bind(ctx.caller.to_string())
    .bind(now)
    .bind(req.a2a_task.map(Json))
    .fetch_one(&a.db)
    .await?;
    tracing::info!(webhook_id = %id, url = %req.url, workspace = %ctx.workspace, "webhook created");
    Ok(Webhook {
        secret: Some(secret),
        ..from_row(row)
    })
}

pub async fn list(a: Automation, ctx: RequestContext, _req: ListWebhooksRequest) -> Result<WebhookList> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM webhook_subscriptions WHERE workspace = $1 ORDER BY created_at, webhook_id"
    )))
    .bind(&ctx.workspace)
    .fetch_all(&a.db)
    .await?;
    Ok(WebhookList {
        webhooks: rows.into_iter().map(from_row).collect(),
    })
}

pub async fn get(a: Automation, ctx: RequestContext, req: WebhookRef) -> Result<Webhook> {
    check_id("webhookId", &req.webhook_id)?;
    find(&a, &ctx, &req.webhook_id).await
}

pub async fn update(a: Automation, ctx: RequestContext, req: UpdateWebhookRequest) -> Result<Webhook> {
    check_id("webhookId", &req.webhook_id)?;
    if let Some(url) = &req.url {
        check_url(&a, url)?;
    }
    let events = req.events.map(|e| check_events(Some(e))).transpose()?;
    check_description(&req.description)?;
    // Enabling clears the failure run; disabling by hand says so.
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_subscriptions SET
             url = coalesce($3, url),
             event_types = coalesce($4, event_types),
             description = coalesce($5, description),
             enabled = coalesce($6, enabled),
             disabled_reason = CASE WHEN $6 IS NULL THEN disabled_reason WHEN $6 THEN NULL ELSE 'disabled by ' || $7 END,
             consecutive_failures = CASE WHEN $6 THEN 0 ELSE consecutive_failures END,
             updated_at = $8
         WHERE webhook_id = $1 AND workspace = $2 RETURNING {COLUMNS}"
    )))
    .bind(&req.webhook_id)
    .bind(&ctx.workspace)
    .bind(&req.url)
    .bind(&events)
    .bind(&req.description)
    .bind(req.enabled)
    .bind(ctx.caller.to_string())
    .bind(relay_bus::now_ms())
    .fetch_optional(&a.db)
    .await?;
    let webhook = row
        .map(from_row)
        .ok_or_else(|| AutomationError::NotFound(format!("webhook {} not found", req.webhook_id)))?;
    if webhook.enabled {
        a.post.notify_one();
    }
    Ok(webhook)
}

pub async fn delete(a: Automation, ctx: RequestContext, req: WebhookRef) -> Result<Deleted> {
    check_id("webhookId", &req.webhook_id)?;
    let n = sqlx::query("DELETE FROM webhook_subscriptions WHERE webhook_id = $1 AND workspace = $2")
        .bind(&req.webhook_id)
        .bind(&ctx.workspace)
        .execute(&a.db)
        .await?
        .rows_affected();
    if n == 0 {
        return Err(AutomationError::NotFound(format!(
            "webhook {} not found",
            req.webhook_id
        )));
    }
    Ok(Deleted { deleted: true })
}

pub(crate) const DELIVERY_COLUMNS: &str = "d.delivery_id, d.webhook_id, d.event_seq, d.event_type, d.status,
    d.attempts::bigint, d.next_attempt_at, d.last_status::bigint, d.last_error, d.created_at, d.delivered_at";

type DeliveryRow = (
    String,
    String,
    i64,
    String,
    String,
    i64,
    i64,
    Option<i64>,
    Option<String>,
    i64,
    Option<i64>,
);

fn delivery(r: DeliveryRow) -> WebhookDelivery {
    let status = match r.4.as_str() {
        "delivered" => WebhookDeliveryStatus::Delivered,
        "failed" => WebhookDeliveryStatus::Failed,
        _ => WebhookDeliveryStatus::Pending,
    };
    WebhookDelivery {
        delivery_id: r.0,
        webhook_id: r.1,
        event_seq: r.2,
        event_type: r.3,
        status,
        attempts: r.5,
        next_attempt_at: (status == WebhookDeliveryStatus::Pending).then_some(r.6),
        last_status: r.7,
        last_error: r.8,
        created_at: r.9,
        delivered_at: r.10,
    }
}

pub async fn deliveries(
    a: Automation,
    ctx: RequestContext,
    req: WebhookDeliveriesRequest,
) -> Result<WebhookDeliveryList> {
    check_id("webhookId", &req.webhook_id)?;
    let limit = crate::page_limit(req.limit)?;
    find(&a, &ctx, &req.webhook_id).await?;
    let rows: Vec<DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries d
         WHERE d.webhook_id = $1 AND ($2::text IS NULL OR d.status = $2)
         ORDER BY d.created_at DESC, d.event_seq DESC LIMIT $3"
    )))
    .bind(&req.webhook_id)
    .bind(
        req.status
            .map(relay_contracts::automation::WebhookDeliveryStatus::as_str),
    )
    .bind(limit)
    .fetch_all(&a.db)
    .await?;
    Ok(WebhookDeliveryList {
        deliveries: rows.into_iter().map(delivery).collect(),
    })
}

pub async fn replay(a: Automation, ctx: RequestContext, req: ReplayRequest) -> Result<WebhookDelivery> {
    check_id("webhookId", &req.webhook_id)?;
    check_id("deliveryId", &req.delivery_id)?;
    find(&a, &ctx, &req.webhook_id).await?;
    let row: Option<DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE webhook_deliveries d SET status = 'pending', attempts = 0, next_attempt_at = $3, last_error = NULL
         WHERE d.delivery_id = $1 AND d.webhook_id = $2 RETURNING {DELIVERY_COLUMNS}"
    )))
    .bind(&req.delivery_id)
    .bind(&req.webhook_id)
    .bind(relay_bus::now_ms())
    .fetch_optional(&a.db)
    .await?;
    let d = row.map(delivery).ok_or_else(|| {
        AutomationError::NotFound(format!(
            "delivery {} of webhook {} not found",
            req.delivery_id, req.webhook_id
        ))
    })?;
    a.post.notify_one();
    Ok(d)
}
