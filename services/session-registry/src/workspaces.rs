//! `workspace.*`: the workspaces themselves. The mesh's administrators (relayctl, an admin key
//! of `default`) create and see them all; an admin key of another workspace sees its own.

use crate::Registry;
use crate::error::{RegistryError, Result};
use relay_contracts::RequestContext;
use relay_contracts::access::is_token;
use relay_contracts::context::DEFAULT_WORKSPACE;
use relay_contracts::workspace::{
    CreateWorkspaceRequest, ListWorkspacesRequest, Workspace, WorkspaceList, WorkspaceRef,
};
use sqlx::FromRow;

#[derive(FromRow)]
struct Row {
    name: String,
    display_name: Option<String>,
    created_at: i64,
    created_by: Option<String>,
}

impl From<Row> for Workspace {
    fn from(r: Row) -> Self {
        Workspace {
            name: r.name,
            display_name: r.display_name,
            created_at: r.created_at,
            created_by: r.created_by,
        }
    }
}

/// The workspace a caller is confined to, unless it administers the mesh.
fn confined(ctx: &RequestContext) -> Option<&str> {
    ctx.scope().filter(|w| *w != DEFAULT_WORKSPACE)
}

pub async fn create(reg: Registry, ctx: RequestContext, req: CreateWorkspaceRequest) -> Result<Workspace> {
    if let Some(own) = confined(&ctx) {
        return Err(RegistryError::Forbidden(format!(
            "a key of workspace {own} cannot create workspaces; an admin key of default can"
        )));
    }
    if !is_token(&req.name) || req.name.len() > 64 {
        return Err(RegistryError::Invalid(format!(
            "workspace name {:?}: 1 to 64 letters, digits, '-' or '_'",
            req.name
        )));
    }
    if req
        .display_name
        .as_ref()
        .is_some_and(|d| d.chars().count() > 200 || d.contains('\0'))
    {
        return Err(RegistryError::Invalid("displayName: at most 200 characters".into()));
    }
    let row: Option<Row> = sqlx::query_as(
        "INSERT INTO registry_workspaces (name, display_name, created_at, created_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO NOTHING RETURNING name, display_name, created_at, created_by",
    )
    .bind(&req.name)
    .bind(&req.display_name)
    .bind(relay_bus::now_ms())
    .bind(ctx.caller.to_string())
    .fetch_optional(&reg.db)
    .await?;
    let w = row.ok_or_else(|| RegistryError::Conflict(format!("workspace {} exists", req.name)))?;
    tracing::info!(workspace = w.name, by = %ctx.caller, "workspace created");
    relay_bus::audit::record(&reg.nats, &w.name, &ctx, "workspace.create", &w.name, None);
    Ok(w.into())
}

pub async fn get(reg: Registry, ctx: RequestContext, req: WorkspaceRef) -> Result<Workspace> {
    let not_found = || RegistryError::NotFound {
        what: "workspace",
        id: req.name.clone(),
    };
    if confined(&ctx).is_some_and(|own| own != req.name) {
        return Err(not_found());
    }
    let row: Option<Row> =
        sqlx::query_as("SELECT name, display_name, created_at, created_by FROM registry_workspaces WHERE name = $1")
            .bind(&req.name)
            .fetch_optional(&reg.db)
            .await?;
    row.map(Into::into).ok_or_else(not_found)
}

pub async fn list(reg: Registry, ctx: RequestContext, _req: ListWorkspacesRequest) -> Result<WorkspaceList> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT name, display_name, created_at, created_by FROM registry_workspaces
         WHERE $1::text IS NULL OR name = $1 ORDER BY name LIMIT 10000",
    )
    .bind(confined(&ctx))
    .fetch_all(&reg.db)
    .await?;
    Ok(WorkspaceList {
        workspaces: rows.into_iter().map(Into::into).collect(),
    })
}
