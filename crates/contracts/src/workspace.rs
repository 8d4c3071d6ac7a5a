//! Workspaces: the unit of isolation. Every session (with its agents, messages and events),
//! permission request, question, delivery, cost record and API key belongs to one; a caller
//! with a key or an agent identity sees only its own. `default` always exists.

use crate::capabilities::DeliveryMode;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// How messages are delivered in a workspace (seed 001 step 3), applied before delivery: the
/// mode of a send that names none, the modes a send may ask for, and how many deliveries may
/// wait for one agent. A delivery the policy refuses fails with a receipt that says why.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeliveryPolicy {
    pub default_mode: Option<DeliveryMode>,
    /// Every mode when absent; the default mode is always allowed.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 5))]
    pub allowed_modes: Option<Vec<DeliveryMode>>,
    /// No cap when absent.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000000))]
    #[serde(default, deserialize_with = "whole_number")]
    pub max_pending_per_agent: Option<i64>,
}

impl DeliveryPolicy {
    /// Why a delivery in `mode` to an agent with `pending` deliveries waiting is refused.
    pub fn refusal(&self, workspace: &str, mode: DeliveryMode, pending: i64) -> Option<String> {
        if let Some(allowed) = &self.allowed_modes
            && !allowed.contains(&mode)
            && self.default_mode != Some(mode)
        {
            let names: Vec<&str> = allowed.iter().map(|m| m.as_str()).collect();
            return Some(format!(
                "workspace policy: delivery mode {} is not allowed in workspace {workspace} (allowed: {})",
                mode.as_str(),
                names.join(", ")
            ));
        }
        match self.max_pending_per_agent {
            Some(max) if pending >= max => Some(format!(
                "workspace policy: the agent already has {pending} deliveries waiting, the most workspace {workspace} allows (maxPendingPerAgent {max})"
            )),
            _ => None,
        }
    }
}

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
    pub delivery_policy: Option<DeliveryPolicy>,
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
    #[serde(default, deserialize_with = "object_or_null")]
    pub delivery_policy: Option<DeliveryPolicy>,
}

/// `workspace.setDeliveryPolicy`: replaces the workspace's policy (`null`: none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetDeliveryPolicyRequest {
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    pub name: String,
    #[serde(default, deserialize_with = "object_or_null")]
    pub delivery_policy: Option<DeliveryPolicy>,
}

/// `workspace.get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkspaceRef {
    pub name: String,
}

/// `workspace.delete`: what deleting it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDeleted {
    pub name: String,
    pub deleted_at: i64,
    /// The keys revoked with it (their streams end, schedules pause, webhooks stop).
    pub keys_revoked: Vec<String>,
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

/// A JSON integer, also when written with a zero fraction (`2.0`), as JSON Schema's `integer`
/// allows.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let n: Option<f64> = Option::deserialize(d)?;
    match n {
        Some(n) if n.fract() != 0.0 || n.abs() > 9.0e15 => {
            Err(serde::de::Error::custom(format!("{n} is not a whole number")))
        }
        n => Ok(n.map(|n| n as i64)),
    }
}

/// A policy is a JSON object (or null): serde would also read a struct from an array.
fn object_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<DeliveryPolicy>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v @ serde_json::Value::Object(_)) => serde_json::from_value(v).map(Some).map_err(serde::de::Error::custom),
        Some(_) => Err(serde::de::Error::custom("deliveryPolicy must be an object")),
    }
}
