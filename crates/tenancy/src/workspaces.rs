//! `workspace.*`: the workspaces themselves. The mesh's administrators (relayctl, an admin key
//! of `default`) create and see them all; an admin key of another workspace sees its own.

use crate::Host;
use crate::error::{Result, TenancyError};
use relay_contracts::RequestContext;
use relay_contracts::access::is_token;
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::keys::{KEY_REVOKED, KeyRevoked};
use relay_contracts::workspace::{
    CreateWorkspaceRequest, DeliveryPolicy, ListWorkspacesRequest, SetDeliveryPolicyRequest, Workspace,
    WorkspaceDeleted, WorkspaceList, WorkspaceRef,
};
use sqlx::FromRow;
use sqlx::types::Json;

#[derive(FromRow)]
struct Row {
    name: String,
    display_name: Option<String>,
    created_at: i64,
    created_by: Option<String>,
    delivery_policy: Option<Json<DeliveryPolicy>>,
}

const COLUMNS: &str = "name, display_name, created_at, created_by, delivery_policy";

impl From<Row> for Workspace {
    fn from(r: Row) -> Self {
        Workspace {
            name: r.name,
            display_name: r.display_name,
            created_at: r.created_at,
            created_by: r.created_by,
            delivery_policy: r.delivery_policy.map(|p| p.0),
        }
    }
}

fn check_policy(p: &Option<DeliveryPolicy>) -> Result<()> {
    let Some(p) = p else { return Ok(()) };
    if p.allowed_modes.as_ref().is_some_and(|a| a.is_empty() || a.len() > 5) {
        return Err(TenancyError::Invalid(
            "deliveryPolicy.allowedModes: 1 to 5 modes (leave it out for all)".into(),
        ));
    }
    if p.max_pending_per_agent.is_some_and(|m| !(1..=1_000_000).contains(&m)) {
        return Err(TenancyError::Invalid(
            "deliveryPolicy.maxPendingPerAgent: 1 to 1000000".into(),
        ));
    }
    Ok(())
}

/// The workspace a caller is confined to, unless it administers the mesh.
fn confined(ctx: &RequestContext) -> Option<&str> {
    ctx.scope().filter(|w| *w != DEFAULT_WORKSPACE)
}

pub async fn create<S: Host>(host: S, ctx: RequestContext, req: CreateWorkspaceRequest) -> Result<Workspace> {
    if let Some(own) = confined(&ctx) {
        return Err(TenancyError::Forbidden(format!(
            "a key of workspace {own} cannot create workspaces; an admin key of default can"
        )));
    }
    if !is_token(&req.name) || req.name.len() > 64 {
        return Err(TenancyError::Invalid(format!(
            "workspace name {:?}: 1 to 64 letters, digits, '-' or '_'",
            req.name
        )));
    }
    if req
        .display_name
        .as_ref()
        .is_some_and(|d| d.chars().count() > 200 || d.contains('\0'))
    {
        return Err(TenancyError::Invalid("displayName: at most 200 characters".into()));
    }
    check_policy(&req.delivery_policy)?;
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO registry_workspaces (name, display_name, created_at, created_by, delivery_policy) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO NOTHING RETURNING {COLUMNS}"
    )))
    .bind(&req.name)
    .bind(&req.display_name)
    .bind(relay_bus::now_ms())
    .bind(ctx.caller.to_string())
    .bind(req.delivery_policy.as_ref().map(Json))
    .fetch_optional(&host.tenancy().db)
    .await?;
    // A deleted workspace's name stays taken: its data may still be there.
    let w = row.ok_or_else(|| TenancyError::Conflict(format!("workspace {} exists (or existed)", req.name)))?;
    tracing::info!(workspace = w.name, by = %ctx.caller, "workspace created");
    relay_bus::audit::record(&host.tenancy().nats, &w.name, &ctx, "workspace.create", &w.name, None);
    Ok(w.into())
}

pub async fn get<S: Host>(host: S, ctx: RequestContext, req: WorkspaceRef) -> Result<Workspace> {
    let not_found = || TenancyError::NotFound {
        what: "workspace",
        id: req.name.clone(),
    };
    if confined(&ctx).is_some_and(|own| own != req.name) {
        return Err(not_found());
    }
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_workspaces WHERE name = $1 AND deleted_at IS NULL"
    )))
    .bind(&req.name)
    .fetch_optional(&host.tenancy().db)
    .await?;
    row.map(Into::into).ok_or_else(not_found)
}

pub async fn list<S: Host>(host: S, ctx: RequestContext, _req: ListWorkspacesRequest) -> Result<WorkspaceList> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_workspaces
         WHERE ($1::text IS NULL OR name = $1) AND deleted_at IS NULL ORDER BY name LIMIT 10000"
    )))
    .bind(confined(&ctx))
    .fetch_all(&host.tenancy().db)
    .await?;
    Ok(WorkspaceList {
        workspaces: rows.into_iter().map(Into::into).collect(),
    })
}

/// `workspace.setDeliveryPolicy`: sends from now on follow it; deliveries already waiting keep
/// the policy they were sent under.
pub async fn set_delivery_policy<S: Host>(
    host: S,
    ctx: RequestContext,
    req: SetDeliveryPolicyRequest,
) -> Result<Workspace> {
    let not_found = || TenancyError::NotFound {
        what: "workspace",
        id: req.name.clone(),
    };
    if confined(&ctx).is_some_and(|own| own != req.name) {
        return Err(not_found());
    }
    check_policy(&req.delivery_policy)?;
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE registry_workspaces SET delivery_policy = $2 WHERE name = $1 AND deleted_at IS NULL RETURNING {COLUMNS}"
    )))
    .bind(&req.name)
    .bind(req.delivery_policy.as_ref().map(Json))
    .fetch_optional(&host.tenancy().db)
    .await?;
    let w = row.ok_or_else(not_found)?;
    tracing::info!(workspace = w.name, by = %ctx.caller, policy = ?w.delivery_policy, "delivery policy set");
    relay_bus::audit::record(
        &host.tenancy().nats,
        &w.name,
        &ctx,
        "workspace.setDeliveryPolicy",
        &w.name,
        None,
    );
    Ok(w.into())
}

/// `workspace.delete`: the mesh's administrators only, never `default`, once no agent of it is
/// live. Its keys are revoked in the same transaction and announced (`key.revoked`), so their
/// streams end and what they started stops; from then on it is not found.
pub async fn delete<S: Host>(host: S, ctx: RequestContext, req: WorkspaceRef) -> Result<WorkspaceDeleted> {
    let not_found = || TenancyError::NotFound {
        what: "workspace",
        id: req.name.clone(),
    };
    match confined(&ctx) {
        Some(own) if own != req.name => return Err(not_found()),
        Some(own) => {
            return Err(TenancyError::Forbidden(format!(
                "a key of workspace {own} cannot delete it; an admin key of default can"
            )));
        }
        None => {}
    }
    if req.name == DEFAULT_WORKSPACE {
        return Err(TenancyError::Conflict(
            "workspace default always exists; it cannot be deleted".into(),
        ));
    }
    let mut tx = host.tenancy().db.begin().await?;
    let now = relay_bus::now_ms();
    sqlx::query("SELECT 1 FROM registry_workspaces WHERE name = $1 AND deleted_at IS NULL FOR UPDATE")
        .bind(&req.name)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(not_found)?;
    let live = host.live_agents(&mut tx, &req.name).await?;
    if live > 0 {
        return Err(TenancyError::Conflict(format!(
            "workspace {} has {live} live agent(s): stop them first",
            req.name
        )));
    }
    sqlx::query("UPDATE registry_workspaces SET deleted_at = $2 WHERE name = $1")
        .bind(&req.name)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let keys_revoked: Vec<String> = sqlx::query_scalar(
        "UPDATE registry_api_keys SET revoked_at = $2 WHERE workspace = $1 AND revoked_at IS NULL RETURNING key_id",
    )
    .bind(&req.name)
    .bind(now)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    tracing::info!(workspace = req.name, keys = keys_revoked.len(), by = %ctx.caller, "workspace deleted");
    let detail = serde_json::json!({ "keysRevoked": keys_revoked });
    relay_bus::audit::record(
        &host.tenancy().nats,
        &req.name,
        &ctx,
        "workspace.delete",
        &req.name,
        Some(detail),
    );
    for key_id in &keys_revoked {
        let event = KeyRevoked {
            key_id: key_id.clone(),
            workspace: req.name.clone(),
        };
        if let Err(e) = relay_bus::client::publish(&host.tenancy().nats, KEY_REVOKED.to_string(), &event).await {
            tracing::warn!(error = %e, "cannot publish key.revoked");
        }
    }
    Ok(WorkspaceDeleted {
        name: req.name,
        deleted_at: now,
        keys_revoked,
    })
}
