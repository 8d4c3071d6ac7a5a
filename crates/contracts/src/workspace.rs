//! Workspaces: the unit of isolation. Every session (with its agents, messages and events),
//! permission request, question, delivery, cost record and API key belongs to one; a caller
//! with a key or an agent identity sees only its own. `default` always exists.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    /// Letters, digits, `-` and `_` (it is a NATS subject token): `acme`, `team-7`.
    pub name: String,
    pub display_name: Option<String>,
    pub created_at: i64,
    pub created_by: Option<String>,
}

/// `workspace.create`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWorkspaceRequest {
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 200, pattern = "^[^\\u0000]*$"))]
    pub display_name: Option<String>,
}

/// `workspace.get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceRef {
    pub name: String,
}

/// `workspace.list`: every workspace for the mesh's admins, a key's own otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListWorkspacesRequest {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceList {
    pub workspaces: Vec<Workspace>,
}
