//! Deliveries (seed 001): one per message and target agent, a state machine in Postgres.
//!
//! The registry creates them in the same transaction as the message (`session.sendMessage`);
//! the delivery runner (services/delivery-runner) owns their state from there.

use crate::capabilities::DeliveryMode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// created → accepted/deferred → delivered | failed; cancelled by request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryStatus {
    Pending,
    Accepted,
    Deferred,
    Delivered,
    Failed,
    Cancelled,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Accepted => "accepted",
            DeliveryStatus::Deferred => "deferred",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Cancelled => "cancelled",
        }
    }

    /// No further state change happens on its own.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            DeliveryStatus::Delivered | DeliveryStatus::Failed | DeliveryStatus::Cancelled
        )
    }
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub delivery_id: String,
    pub message_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub mode: DeliveryMode,
    pub status: DeliveryStatus,
    pub attempts: i64,
    /// Not attempted before this time (Unix ms): a deferral's availableAt, a retry's backoff.
    pub available_at: i64,
    /// Why it was deferred, failed or cancelled.
    pub reason: Option<String>,
    pub retryable: Option<bool>,
    pub metadata: Option<Value>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRef {
    pub delivery_id: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ListDeliveriesRequest {
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub message_id: Option<String>,
    pub status: Option<DeliveryStatus>,
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListDeliveriesResponse {
    pub deliveries: Vec<Delivery>,
    pub next_cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelDeliveryRequest {
    pub delivery_id: String,
    pub reason: Option<String>,
}

/// Why a message exists and how to treat it (seed 001). `id` is the delivery id: a harness
/// that sees the same id twice acknowledges without surfacing it again.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageContext {
    pub id: String,
    pub mode: DeliveryMode,
    /// message | mention | dm | thread-reply | action-result | notification
    pub reason: String,
    pub priority: Option<String>,
    pub deadline: Option<String>,
    pub idempotency_key: Option<String>,
    pub metadata: Option<Value>,
}

/// What the runner sends a harness on `agent.<agentId>.deliver`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliverRequest {
    pub context: MessageContext,
    pub message: crate::session::Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptStatus {
    Accepted,
    Delivered,
    Deferred,
    Failed,
}

/// The harness's answer (seed 001 MessageReceipt).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    pub status: ReceiptStatus,
    pub delivery_id: Option<String>,
    /// Deferred: when to try again, Unix ms (a number, or a string of digits).
    pub available_at: Option<Value>,
    pub reason: Option<String>,
    pub retryable: Option<bool>,
    pub metadata: Option<Value>,
}

/// `delivery.flush`: releases held (manual) deliveries of an agent, oldest first.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlushRequest {
    pub agent_id: String,
    pub mode: Option<DeliveryMode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlushResponse {
    pub flushed: i64,
}

/// The subject a harness serves deliveries for one agent session on.
pub fn deliver_subject(agent_id: &str) -> String {
    format!("agent.{agent_id}.deliver")
}
