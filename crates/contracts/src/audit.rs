//! The audit trail: who did what, to what, when, in the event log (append-only, ordered, and
//! read with the same cursor as every event). Entries are events of type [`AUDIT_RECORDED`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

pub const AUDIT_RECORDED: &str = "audit.recorded";

/// The payload of an [`AUDIT_RECORDED`] event.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// The subject acted on: `permission.approve`, `permission.deny`, `question.answer`,
    /// `key.create`, `key.revoke`, `workspace.create`, `agent.stop`, `session.update` (a
    /// session's approval policy override).
    pub action: String,
    /// Who: `admin:<keyId>`, `operator:<keyId>` (a key through the gateway), `service:<identity>`
    /// (relayctl is `service:admin`).
    pub actor: String,
    /// From where: the client address of a call through the gateway; absent for calls over
    /// NATS, whose identity (the actor) says who made them.
    pub origin: Option<String>,
    /// What: the request, question, key, workspace or agent id.
    pub target: String,
    /// The decision, reason, role, … of the action.
    pub detail: Option<Value>,
}

impl AuditEntry {
    /// `ctx` did `action` to `target`.
    pub fn new(ctx: &crate::RequestContext, action: &str, target: &str, detail: Option<Value>) -> AuditEntry {
        AuditEntry {
            action: action.to_string(),
            actor: ctx.caller.to_string(),
            origin: ctx.origin.clone(),
            target: target.to_string(),
            detail,
        }
    }
}

/// Written in the transaction of a session change, like the session's own events.
impl crate::session::EventPayload for AuditEntry {
    const TYPE: &'static str = AUDIT_RECORDED;
}

/// `audit.list`: the caller's workspace's entries, oldest first, after `cursor` (a seq).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListAuditRequest {
    /// Unix ms, inclusive.
    pub since: Option<i64>,
    /// Unix ms, exclusive.
    pub until: Option<i64>,
    /// At most the log's page size (10,000 by default).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 10000),
        schema(minimum = 1, maximum = 10000)
    )]
    pub limit: Option<i64>,
    /// The last seq of the previous page.
    pub cursor: Option<i64>,
}
