//! `key.*`: the gateway's API keys. A token is `rk_<keyId>_<secret>`; the table keeps only
//! SHA-256(secret), compared in constant time, so neither a database dump nor reply timing
//! gives a usable token away.

use crate::Host;
use crate::error::{Result, TenancyError};
use relay_contracts::access::is_token;
use relay_contracts::keys::{
    ApiKey, CreateKeyRequest, CreatedKey, KEY_REVOKED, KeyList, KeyRef, KeyRevoked, KeyRole, ListKeysRequest,
    TOKEN_PREFIX, VerifyKeyRequest,
};
use relay_contracts::{Caller, RequestContext};
use sha2::{Digest, Sha256};
use sqlx::FromRow;
use subtle::ConstantTimeEq;

#[derive(FromRow)]
struct KeyRow {
    key_id: String,
    workspace: String,
    name: String,
    role: String,
    secret_hash: Vec<u8>,
    created_at: i64,
    created_by: Option<String>,
    revoked_at: Option<i64>,
}

impl KeyRow {
    fn key(self) -> ApiKey {
        let role = match self.role.as_str() {
            "admin" => KeyRole::Admin,
            "operator" => KeyRole::Operator,
            _ => KeyRole::Viewer,
        };
        ApiKey {
            key_id: self.key_id,
            name: self.name,
            role,
            workspace: self.workspace,
            created_at: self.created_at,
            created_by: self.created_by,
            revoked_at: self.revoked_at,
        }
    }
}

const COLUMNS: &str = "key_id, workspace, name, role, secret_hash, created_at, created_by, revoked_at";

/// The workspace a key call acts in: an admin key's own; relayctl (a mesh identity) and admin
/// keys of `default` any they name.
fn workspace_of(ctx: &RequestContext, named: Option<String>) -> Result<Option<String>> {
    let person = matches!(ctx.caller, Caller::Admin(_) | Caller::Operator(_) | Caller::Viewer(_));
    let confined = person && ctx.workspace != relay_contracts::context::DEFAULT_WORKSPACE;
    match named {
        Some(w) if confined && w != ctx.workspace => Err(TenancyError::NotFound {
            what: "workspace",
            id: w,
        }),
        Some(w) if !is_token(&w) => Err(TenancyError::Invalid(format!(
            "workspace {w:?}: letters, digits, '-' and '_', at most 128"
        ))),
        Some(w) => Ok(Some(w)),
        None if person => Ok(Some(ctx.workspace.clone())),
        None => Ok(None),
    }
}

fn digest(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

pub async fn create<S: Host>(host: S, ctx: RequestContext, req: CreateKeyRequest) -> Result<CreatedKey> {
    // The limit is on the name as sent, as documented; surrounding whitespace is then dropped.
    let name = req.name.trim();
    if name.is_empty() || req.name.chars().count() > 100 || name.contains('\0') {
        return Err(TenancyError::Invalid("name must be 1 to 100 characters".into()));
    }
    let workspace = workspace_of(&ctx, req.workspace)?.unwrap_or_else(|| ctx.workspace.clone());
    let key_id = uuid::Uuid::now_v7().simple().to_string();
    // Two v4 UUIDs: 244 random bits from the OS generator.
    let secret = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    // Only into a workspace that is there (not deleted).
    let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "INSERT INTO registry_api_keys (key_id, workspace, name, role, secret_hash, created_at, created_by) \
         SELECT $1, $2, $3, $4, $5, $6, $7 FROM registry_workspaces WHERE name = $2 AND deleted_at IS NULL \
         RETURNING {COLUMNS}"
    )))
    .bind(&key_id)
    .bind(&workspace)
    .bind(name)
    .bind(req.role.as_str())
    .bind(digest(&secret))
    .bind(relay_bus::now_ms())
    .bind(ctx.caller.to_string())
    .fetch_optional(&host.tenancy().db)
    .await?;
    let row = row.ok_or_else(|| TenancyError::NotFound {
        what: "workspace",
        id: workspace.clone(),
    })?;
    tracing::info!(key_id, workspace, role = req.role.as_str(), by = %ctx.caller, "API key created");
    let detail = serde_json::json!({"role": req.role.as_str(), "name": name});
    relay_bus::audit::record(
        &host.tenancy().nats,
        &workspace,
        &ctx,
        "key.create",
        &key_id,
        Some(detail),
    );
    Ok(CreatedKey {
        key: row.key(),
        token: format!("{TOKEN_PREFIX}{key_id}_{secret}"),
    })
}

pub async fn list<S: Host>(host: S, ctx: RequestContext, req: ListKeysRequest) -> Result<KeyList> {
    let workspace = workspace_of(&ctx, req.workspace)?;
    let rows: Vec<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_api_keys \
         WHERE ($1::text IS NULL OR workspace = $1) AND ($2 OR revoked_at IS NULL) \
         ORDER BY created_at DESC, key_id DESC LIMIT 1000"
    )))
    .bind(workspace)
    .bind(req.include_revoked.unwrap_or(false))
    .fetch_all(&host.tenancy().db)
    .await?;
    Ok(KeyList {
        keys: rows.into_iter().map(KeyRow::key).collect(),
    })
}

pub async fn revoke<S: Host>(host: S, ctx: RequestContext, req: KeyRef) -> Result<ApiKey> {
    let workspace = workspace_of(&ctx, None)?;
    let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE registry_api_keys SET revoked_at = coalesce(revoked_at, $2) \
         WHERE key_id = $1 AND ($3::text IS NULL OR workspace = $3) RETURNING {COLUMNS}"
    )))
    .bind(&req.key_id)
    .bind(relay_bus::now_ms())
    .bind(workspace)
    .fetch_optional(&host.tenancy().db)
    .await?;
    let key = row
        .ok_or_else(|| TenancyError::NotFound {
            what: "key",
            id: req.key_id.clone(),
        })?
        .key();
    tracing::info!(key_id = key.key_id, by = %ctx.caller, "API key revoked");
    relay_bus::audit::record(
        &host.tenancy().nats,
        &key.workspace,
        &ctx,
        "key.revoke",
        &key.key_id,
        None,
    );
    // Gateways forget the key and end its streams; one that misses this still re-verifies
    // within its cache's lifetime.
    let event = KeyRevoked {
        key_id: key.key_id.clone(),
        workspace: key.workspace.clone(),
    };
    if let Err(e) = relay_bus::client::publish(&host.tenancy().nats, KEY_REVOKED.to_string(), &event).await {
        tracing::warn!(error = %e, "cannot publish key.revoked");
    }
    Ok(key)
}

pub async fn get<S: Host>(host: S, _ctx: RequestContext, req: KeyRef) -> Result<ApiKey> {
    let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_api_keys WHERE key_id = $1"
    )))
    .bind(&req.key_id)
    .fetch_optional(&host.tenancy().db)
    .await?;
    row.map(KeyRow::key).ok_or_else(|| TenancyError::NotFound {
        what: "key",
        id: req.key_id,
    })
}

pub async fn verify<S: Host>(host: S, _ctx: RequestContext, req: VerifyKeyRequest) -> Result<ApiKey> {
    let unauthorized = || TenancyError::Unauthorized("unknown, wrong or revoked API key".into());
    let (key_id, secret) = req
        .token
        .strip_prefix(TOKEN_PREFIX)
        .and_then(|rest| rest.split_once('_'))
        .ok_or_else(unauthorized)?;
    if key_id.len() > 64 {
        return Err(unauthorized());
    }
    let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM registry_api_keys WHERE key_id = $1"
    )))
    .bind(key_id)
    .fetch_optional(&host.tenancy().db)
    .await?;
    match row {
        Some(row) if row.revoked_at.is_none() && bool::from(row.secret_hash.ct_eq(&digest(secret))) => Ok(row.key()),
        _ => Err(unauthorized()),
    }
}
