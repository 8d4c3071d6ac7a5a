//! Workspace-scoped API keys with roles, for the gateway (REST, SSE, gRPC). The registry stores
//! them as SHA-256 digests; a key's token is shown once, by `key.create`.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// Published (not appended) when a key is revoked: gateways forget it and end its streams.
pub const KEY_REVOKED: &str = "key.revoked";
/// Every token starts with it, so a log line or a leaked file shows what it is.
pub const TOKEN_PREFIX: &str = "rk_";
/// The caller id of open access (`gateway.open`) and of the shared token: admins that are not
/// keys, so never revoked or rate limited.
pub const OPEN_CALLER: &str = "open";
pub const SHARED_CALLER: &str = "bearer";

/// Whether a person's caller id names an API key (not open access or the shared token).
pub fn is_key_id(id: &str) -> bool {
    id != OPEN_CALLER && id != SHARED_CALLER
}

/// What a key may do at the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum KeyRole {
    /// Read and stream.
    Viewer,
    /// Also send, approve/deny/answer, pause/resume/stop, flush, retry, cancel.
    Operator,
    /// Also keys, workspaces, policies, budgets.
    Admin,
}

impl KeyRole {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A key as listed: never its token.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub key_id: String,
    pub name: String,
    pub role: KeyRole,
    pub workspace: String,
    pub created_at: i64,
    /// Who made it (`admin:<keyId>`, `service:admin` for relayctl).
    pub created_by: Option<String>,
    pub revoked_at: Option<i64>,
}

/// `key.create`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// A label for people (1–100 characters, not blank).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub name: String,
    pub role: KeyRole,
    /// The caller's workspace when absent; relayctl and admin keys of `default` may name another.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,128}$"))]
    pub workspace: Option<String>,
}

/// The new key and, this once, its token (`Authorization: Bearer <token>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    pub key: ApiKey,
    pub token: String,
}

/// `key.list`: the caller's workspace (relayctl: every workspace unless one is named).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListKeysRequest {
    pub workspace: Option<String>,
    /// Revoked keys too (default false).
    pub include_revoked: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct KeyList {
    pub keys: Vec<ApiKey>,
}

/// `key.revoke`: idempotent; `not_found` for a key of another workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyRef {
    pub key_id: String,
}

/// `key.verify` (the gateway): the key a token belongs to; `unauthorized` when it is unknown,
/// wrong or revoked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerifyKeyRequest {
    pub token: String,
}

/// The payload of [`KEY_REVOKED`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct KeyRevoked {
    pub key_id: String,
    pub workspace: String,
}
