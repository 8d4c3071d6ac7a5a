//! Writes audit entries (`audit.recorded` events) for actions that have no outbox of their own
//! to ride in. Decisions on permissions and questions go through the permission manager's
//! outbox instead, in the transaction of the decision.

use relay_contracts::RequestContext;
use relay_contracts::audit::{AUDIT_RECORDED, AuditEntry};
use relay_contracts::events::{AppendRequest, NewEvent};
use relay_contracts::rpc::EventAppend;
use std::time::Duration;

/// The payload of an entry.
pub fn entry(ctx: &RequestContext, action: &str, target: &str, detail: Option<serde_json::Value>) -> serde_json::Value {
    serde_json::to_value(AuditEntry::new(ctx, action, target, detail)).unwrap_or_default()
}

/// Appends one entry to the log in the background (the action's reply does not wait for it),
/// retrying for up to 30 s while the log is unreachable; an entry that still cannot be written is
/// logged as an error with everything it would have said.
pub fn record(
    nats: &async_nats::Client,
    workspace: &str,
    ctx: &RequestContext,
    action: &str,
    target: &str,
    detail: Option<serde_json::Value>,
) {
    let payload = entry(ctx, action, target, detail);
    let req = AppendRequest::One(NewEvent {
        event_id: Some(uuid::Uuid::now_v7().to_string()),
        event_type: AUDIT_RECORDED.to_string(),
        ts: Some(crate::now_ms()),
        session_id: None,
        agent_name: None,
        agent_id: None,
        workspace: Some(workspace.to_string()),
        payload,
    });
    let nats = nats.clone();
    tokio::spawn(async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match crate::client::call::<EventAppend>(&nats, &req, Duration::from_secs(5)).await {
                Ok(_) => return,
                Err(e) if e.error.retryable && std::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => {
                    tracing::error!(entry = ?req, error = %e, "audit entry not recorded");
                    return;
                }
            }
        }
    });
}
