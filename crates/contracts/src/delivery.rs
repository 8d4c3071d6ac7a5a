//! Deliveries (seed 001): one per message and target agent, a state machine in Postgres.
//!
//! The registry stores a message and the hand-off of its deliveries in one transaction
//! (`session.sendMessage`) and hands them to the delivery runner (`delivery.handoff`), which
//! owns them from there (services/delivery-runner).

use crate::capabilities::DeliveryMode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// created → accepted/deferred → delivered | failed; cancelled by request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
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
        self.into()
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRef {
    pub delivery_id: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ListDeliveriesRequest {
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub message_id: Option<String>,
    pub status: Option<DeliveryStatus>,
    /// Default 100.
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 1000),
        schema(minimum = 1, maximum = 1000)
    )]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListDeliveriesResponse {
    pub deliveries: Vec<Delivery>,
    pub next_cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CancelDeliveryRequest {
    pub delivery_id: String,
    pub reason: Option<String>,
}

/// Why a message exists and how to treat it (seed 001). `id` is the delivery id: a harness
/// that sees the same id twice acknowledges without surfacing it again.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliverRequest {
    pub context: MessageContext,
    pub message: crate::session::Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ReceiptStatus {
    Accepted,
    Delivered,
    Deferred,
    Failed,
}

impl ReceiptStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The harness's answer (seed 001 MessageReceipt); also the body of `delivery.report`, where a
/// harness that accepted a delivery (`delivery.queue`) says later what became of it
/// (`deliveryId` required there).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlushRequest {
    pub agent_id: String,
    pub mode: Option<DeliveryMode>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlushResponse {
    pub flushed: i64,
}

/// Postgres NOTIFY channel that wakes the delivery runners: new deliveries, flush, resume.
pub const WAKE_CHANNEL: &str = "relay_deliveries";

/// A delivery event (seed 001 DeliveryEvent), published on `delivery.<kind>` and appended to
/// the event log as type `delivery.<kind>`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryEvent {
    #[serde(rename = "type")]
    pub event_type: String,
    pub delivery_id: String,
    pub message_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub mode: DeliveryMode,
    pub attempt: i64,
    pub available_at: Option<i64>,
    pub reason: Option<String>,
    pub retryable: Option<bool>,
}

/// `agent.pause` / `agent.resume`: names one agent session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentRef {
    pub agent_id: String,
}

/// The agent's delivery hold after `agent.pause` / `agent.resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentHold {
    pub agent_id: String,
    pub paused: bool,
    /// Deliveries waiting for the agent (pending or deferred).
    pub waiting: i64,
}

/// `agent.stop`: release the agent session; its undelivered deliveries are cancelled.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StopAgentRequest {
    pub agent_id: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StopAgentResponse {
    /// The harness answered the release.
    pub released: bool,
    pub cancelled: i64,
}

/// `agent.input` (and the harness's `agent.<id>.input`): raw input for the agent's terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InputRequest {
    pub agent_id: String,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InputResponse {
    pub accepted: bool,
}

/// `agent.<id>.release`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRequest {
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReleaseResponse {
    pub released: bool,
}

/// `delivery.handoff`: what the registry hands the delivery runner, in the registry's commit
/// order. Applying an entry twice changes nothing (ids are the registry's; an agent entry older
/// than the one applied is ignored), so the registry re-sends until it hears back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HandoffRequest {
    pub entries: Vec<HandoffEntry>,
}

/// One entry of the registry's hand-off outbox: `seq` is its commit order there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HandoffEntry {
    pub seq: i64,
    #[serde(flatten)]
    pub item: HandoffItem,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum HandoffItem {
    /// A stored message and one delivery per target agent, in target order.
    #[serde(rename_all = "camelCase")]
    Message {
        message: Box<crate::session::Message>,
        deliveries: Vec<NewDelivery>,
        /// The trace of the send that stored it: its deliveries go out in it.
        traceparent: Option<String>,
        /// The workspace of its session (`default` when absent).
        #[serde(default)]
        workspace: Option<String>,
        /// That workspace's delivery policy when it was sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        policy: Option<crate::workspace::DeliveryPolicy>,
    },
    /// An agent as the registry now has it: its status and capabilities decide what may go.
    #[serde(rename_all = "camelCase")]
    Agent { agent: Box<crate::session::Agent> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewDelivery {
    pub delivery_id: String,
    pub agent_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HandoffResponse {
    /// Deliveries created by this call (an entry applied before counts 0).
    pub created: i64,
}

/// `delivery.purge`: a purged session's deliveries go too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PurgeDeliveriesRequest {
    pub session_id: String,
    /// Hand-off entries of the session up to this seq are stale: one still on its way (a
    /// relay that timed out while the runner was slow) is ignored when it arrives.
    pub through_seq: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PurgeDeliveriesResponse {
    pub deliveries_deleted: i64,
}

/// `agent.<id>.turn`, served by the harness: whether its CLI is busy with a turn, and (with
/// `interrupt`) interrupt it the way that CLI expects (Escape, Ctrl-C, its own protocol).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnControl {
    #[serde(default)]
    pub interrupt: bool,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnState {
    /// The CLI was working on a turn when asked.
    pub busy: bool,
    /// It was interrupted.
    pub interrupted: bool,
}

/// `agent.<id>.cancel`, served by the harness (seed 001 adapter `cancel`): drop a delivery it
/// accepted and still holds for its boundary.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CancelHeld {
    pub delivery_id: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HeldCancelled {
    /// It was held and is dropped; false: the agent already has it (or never had it).
    pub removed: bool,
}

/// `agent.interrupt`: interrupt whatever the agent's CLI is doing now.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InterruptRequest {
    pub agent_id: String,
    pub reason: Option<String>,
}
