//! `session.<key>` contracts from the Makaio SessionSchemas seed (002), plus the few relay
//! extensions marked as such (capabilities, release, message completion, idempotent message ids).

use crate::capabilities::{AgUiCapabilities, AgentSessionCapabilities, DeliveryMode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use serde_with::skip_serializing_none;

// ---------------------------------------------------------------------------------------------
// Enums

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum SessionStatus {
    Active,
    Closed,
    Archived,
    Discovered,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    #[default]
    All,
    Active,
    Closed,
    Archived,
    Discovered,
}

impl StatusFilter {
    /// `None` means every status.
    pub fn status(self) -> Option<SessionStatus> {
        match self {
            StatusFilter::All => None,
            StatusFilter::Active => Some(SessionStatus::Active),
            StatusFilter::Closed => Some(SessionStatus::Closed),
            StatusFilter::Archived => Some(SessionStatus::Archived),
            StatusFilter::Discovered => Some(SessionStatus::Discovered),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum BranchKind {
    Aside,
    Branch,
    Compress,
    Coordinator,
    Fork,
    Rewrite,
    Subagent,
}

/// The kinds `session.fork` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ForkKind {
    Aside,
    Branch,
    Fork,
}

impl From<ForkKind> for BranchKind {
    fn from(k: ForkKind) -> Self {
        match k {
            ForkKind::Aside => BranchKind::Aside,
            ForkKind::Branch => BranchKind::Branch,
            ForkKind::Fork => BranchKind::Fork,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    AlwaysAsk,
    FullAccess,
    Reject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AgentRole {
    Lead,
    Member,
}

/// The registry's view of an attached agent (not the live status, which arrives as events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AgentRecordStatus {
    Active,
    Idle,
    Dead,
    Disposed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Extension,
    System,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Compact,
    Text,
    Voice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    Assistant,
    System,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    Active,
    Completed,
    Error,
    /// Cancelled while it ran (`session.turn.cancel`, or a send that interrupted it).
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Cancelled,
    Completed,
    Error,
    Merged,
    Rejected,
    Superseded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReasoningEffort {
    None,
    Low,
    Medium,
    High,
    ExtraHigh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnConflict {
    #[default]
    Fail,
    Skip,
    Overwrite,
}

// ---------------------------------------------------------------------------------------------
// Records

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    pub agent_id: String,
    pub session_id: String,
    pub adapter_id: String,
    pub adapter_name: String,
    pub adapter_session_id: Option<String>,
    pub client_id: Option<String>,
    pub compression_mode: Option<String>,
    pub created_at: i64,
    pub cwd: Option<String>,
    pub harness_id: Option<String>,
    pub last_activity_at: i64,
    pub model: Option<String>,
    pub persona_id: Option<String>,
    pub profile_id: Option<String>,
    pub provider_config_id: Option<String>,
    pub role: AgentRole,
    pub status: AgentRecordStatus,
    /// Relay extension: what this agent session declared it can do (seed 000).
    pub capabilities: Option<AgentSessionCapabilities>,
    /// Relay extension: AG-UI discovery document (seed 004), when declared.
    pub agent_capabilities: Option<AgUiCapabilities>,
    /// Relay extension: the name other agents and people address it by (`@handle`), unique
    /// among the live agents of its workspace; free again once it is disposed.
    pub handle: Option<String>,
    /// Relay extension: the lead agent that spawned it (a delegated worker); that agent may
    /// stop it.
    pub spawned_by: Option<String>,
    /// Relay extension: the host its harness runs on (spawned agents; from the host's
    /// heartbeats).
    pub host_id: Option<String>,
    /// Relay extension: since when its host has not heartbeated; its deliveries are held
    /// until the host is back or the registry's `hosts.on_lost` ends or re-homes it.
    pub offline_since: Option<i64>,
    /// Relay extension: the placement it was spawned with; a re-homed agent goes to a host
    /// that fits it too.
    pub placement: Option<crate::hosts::Placement>,
    /// Relay extension: the status the agent session last reported (seed 000 `status.changed`
    /// or `status.<state>` in the event log: `waiting` on a person, `blocked`, `idle`, …);
    /// absent until it reports one. `status` is the registry's record of it (seed 002).
    pub reported_status: Option<AgentStatus>,
    /// Relay extension: when it reported `reportedStatus` (Unix ms, the event's `ts`).
    pub reported_status_at: Option<i64>,
}

impl Agent {
    /// Whether it is still attached (not disposed).
    pub fn is_attached(&self) -> bool {
        self.status != AgentRecordStatus::Disposed
    }

    /// What it declared it can take, or the minimum every agent can.
    pub fn effective_capabilities(&self) -> AgentSessionCapabilities {
        self.capabilities
            .clone()
            .unwrap_or_else(AgentSessionCapabilities::minimum)
    }

    /// `@handle`, else `@<agentId>`: how it is named in a conversation.
    pub fn participant(&self) -> String {
        format!("@{}", self.handle.as_deref().unwrap_or(&self.agent_id))
    }
}

/// The longest handle: shorter than any agent id the mesh makes (a UUID), so a name in an
/// agent route is a handle or an id, never both.
pub const MAX_HANDLE_CHARS: usize = 24;

/// The handle `name` stands for, if it is one: 1 to [`MAX_HANDLE_CHARS`] letters, digits, `-`
/// or `_`, starting with a letter or digit, with or without a leading `@`. Handles are
/// case-insensitive (`Worker1` is `worker1`) and kept in lowercase.
pub fn handle_of(name: &str) -> Option<String> {
    let h = name.strip_prefix('@').unwrap_or(name);
    let valid = (1..=MAX_HANDLE_CHARS).contains(&h.len())
        && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && h.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    valid.then(|| h.to_ascii_lowercase())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub message_count: i64,
    pub first_user_message: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub session_id: String,
    pub status: SessionStatus,
    pub title: Option<String>,
    pub adapter_id: Option<String>,
    pub adapter_name: Option<String>,
    pub adapter_session_id: Option<String>,
    #[serde(default)]
    pub agents: Vec<Agent>,
    pub approval_policy_override: Option<ApprovalPolicy>,
    pub branch_kind: Option<BranchKind>,
    pub client_account_id: Option<String>,
    pub client_id: Option<String>,
    pub created_at: i64,
    pub execution_target_id: Option<String>,
    pub fork_point_message_id: Option<String>,
    pub fork_transforms: Option<Value>,
    pub is_imported: Option<bool>,
    pub is_orchestrated: Option<bool>,
    pub last_activity_at: i64,
    pub last_client_identity_observation: Option<Value>,
    pub lead_agent_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub root_session_id: Option<String>,
    pub spawning_tool_call_id: Option<String>,
    pub summary: Option<String>,
    pub summary_updated_at: Option<i64>,
    pub target_working_directory: Option<String>,
    pub origin_window_id: Option<String>,
    pub preview: Option<Preview>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub message_id: String,
    pub session_id: String,
    /// Nullable in the seed: imported history may have no turn.
    #[serde(default)]
    #[serialize_always]
    pub turn_id: Option<String>,
    pub role: MessageRole,
    pub blocks: Vec<Value>,
    pub content_text: String,
    pub agent_id: Option<String>,
    pub adapter_message_id: Option<String>,
    pub adapter_session_id: Option<String>,
    pub edit_of: Option<String>,
    pub origin: Option<Origin>,
    pub timestamp: i64,
    /// Relay extension: the agents this message was routed to.
    pub target_agent_ids: Option<Vec<String>>,
    /// Relay extension: the delivery mode requested for it.
    pub delivery_mode: Option<DeliveryMode>,
    /// Relay extension: set when relay messaging (`message.send`) brought it.
    pub relay: Option<crate::messaging::RelayContext>,
    /// Relay extension (seed 001 `MessageContext.priority`): urgent and high messages go before
    /// normal and low ones waiting for the same agent.
    pub priority: Option<crate::messaging::Priority>,
    /// Relay extension (seed 001 `MessageContext.deadline`, RFC 3339): a delivery still waiting
    /// then fails with reason `deadline`.
    pub deadline: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub turn_id: String,
    pub session_id: String,
    pub turn_number: i64,
    pub status: TurnStatus,
    pub started_at: i64,
    pub completed_at: Option<i64>,
    pub error: Option<String>,
    pub usage: Option<Value>,
}

/// How to pick (or describe) an agent. The seed's schema is loose: unknown keys are kept.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentSelection {
    pub kind: String,
    pub adapter_id: Option<String>,
    pub adapter_name: Option<String>,
    pub model: Option<String>,
    pub provider_config_id: Option<String>,
    pub persona_id: Option<String>,
    pub cwd: Option<String>,
    pub allowed_tools: Option<Vec<String>>,
    pub disallowed_tools: Option<Vec<String>>,
    pub allowed_directories: Option<Vec<String>>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub system_prompt: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AgentSelection {
    /// `{"kind": "adapter", "adapterName": name}`.
    pub fn adapter(name: impl Into<String>) -> Self {
        AgentSelection {
            kind: "adapter".into(),
            adapter_id: None,
            adapter_name: Some(name.into()),
            model: None,
            provider_config_id: None,
            persona_id: None,
            cwd: None,
            allowed_tools: None,
            disallowed_tools: None,
            allowed_directories: None,
            reasoning_effort: None,
            system_prompt: None,
            extra: Map::new(),
        }
    }
}

/// One content block or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum Blocks {
    Many(Vec<Value>),
    One(Value),
}

impl Blocks {
    pub fn into_vec(self) -> Vec<Value> {
        match self {
            Blocks::Many(v) => v,
            Blocks::One(b) => vec![b],
        }
    }
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StructuredContent {
    pub blocks: Blocks,
    pub role: Option<MessageRole>,
}

/// A message is plain text or content blocks (`{type:"text",text}`, `{type:"image",…}`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Structured(StructuredContent),
}

/// `agentIds`: a list of agent ids or the literal `"all"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum AgentTargets {
    Ids(Vec<String>),
    All(AllLiteral),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AllLiteral {
    All,
}

// ---------------------------------------------------------------------------------------------
// Requests and replies

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreateRequest {
    pub session_id: Option<String>,
    pub title: Option<String>,
    pub parent_session_id: Option<String>,
    pub branch_kind: Option<BranchKind>,
    pub execution_target_id: Option<String>,
    pub fork_point_message_id: Option<String>,
    pub fork_transforms: Option<Value>,
    pub origin_window_id: Option<String>,
    pub spawning_tool_call_id: Option<String>,
    pub target_working_directory: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionIdResponse {
    pub session_id: String,
}

/// Request of get, archive, purge, resume, getChildren, turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CloseRequest {
    pub session_id: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetResponse {
    pub session: Option<Session>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SuccessResponse {
    pub success: bool,
}

pub const OK: SuccessResponse = SuccessResponse { success: true };

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ListRequest {
    pub status: Option<StatusFilter>,
    pub execution_target_id: Option<String>,
    pub include_preview: Option<bool>,
    /// Default 50; at most `registry.max_page_size` (500 by default).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 500),
        schema(minimum = 1, maximum = 500)
    )]
    pub limit: Option<i64>,
    #[cfg_attr(feature = "openapi", param(minimum = 0), schema(minimum = 0))]
    pub offset: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListResponse {
    pub sessions: Vec<Session>,
    pub total: i64,
}

/// Partial update. An explicit `null` clears a nullable field; an absent key leaves it alone;
/// an unknown key is refused (a typo must not look like a change that was made).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateRequest {
    pub session_id: String,
    #[serde(default, with = "::serde_with::rust::double_option")]
    pub approval_policy_override: Option<Option<ApprovalPolicy>>,
    #[serde(default, with = "::serde_with::rust::double_option")]
    pub execution_target_id: Option<Option<String>>,
    /// Relay extension.
    pub title: Option<String>,
    /// Relay extension.
    pub summary: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PurgeResponse {
    pub success: bool,
    pub events_deleted: Option<i64>,
    pub error: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ForkRequest {
    pub source_session_id: String,
    pub from_message_id: Option<String>,
    pub name: Option<String>,
    pub branch_kind: Option<ForkKind>,
    pub existing_session_id: Option<String>,
    pub target_working_directory: Option<String>,
    pub transforms: Option<Value>,
}

/// Seed 002 `session.enrichContext`, an optional subject: a host service (not relay-mesh) may
/// serve it with extra context for a session (project, worktree, …). Nobody serving it means
/// `{handled: false}` ([`ENRICH_CONTEXT`]).
pub const ENRICH_CONTEXT: &str = "session.enrichContext";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnrichContextRequest {
    pub session_id: String,
}

/// What the host answered, or `handled: false` with no context when no host serves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EnrichContextResponse {
    pub handled: bool,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context: serde_json::Map<String, Value>,
}

/// `session.observeClient`: which client (an app, an editor window) is behind a session, and the
/// canonical account it resolved to; a different account emits `session.clientAccount.changed`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObserveClientRequest {
    pub session_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 256))]
    pub client_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 256))]
    pub client_account_id: String,
    /// What was observed (`oauth`, `api-key`, …).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64))]
    pub kind: String,
    /// Who observed it (`gateway`, an extension).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 64))]
    pub source: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub payload: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ObserveClientResponse {
    /// The account changed (`session.clientAccount.changed` was emitted).
    pub changed: bool,
    pub previous_client_account_id: Option<String>,
}

/// `session.agent.swap`: the agent's model or working directory changes (a connector swap);
/// emits `session.connectorSwap.editRequested` so a UI can offer to edit the history.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SwapAgentRequest {
    pub session_id: String,
    pub agent_id: String,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 256))]
    pub model: Option<String>,
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 4096))]
    pub cwd: Option<String>,
}

/// One step of a compression pipeline (seed 002): an action id and its options.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PipelineStep {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 128, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub action_id: String,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub options: Option<serde_json::Map<String, Value>>,
}

/// `session.compress`: compress the session's context with the agents' own compaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompressRequest {
    pub session_id: String,
    /// 1 to 20 steps.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 20))]
    pub pipeline: Vec<PipelineStep>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompressResponse {
    /// What was done: the pipeline, each agent asked and the command it was given.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub context_json: serde_json::Map<String, Value>,
    /// The `session.compressed` event.
    pub event_id: String,
    /// The context window's tokens before (the cost aggregator's count; 0 when unknown).
    pub tokens_before: i64,
    /// Known once the agents report usage again.
    pub tokens_after: Option<i64>,
}

/// `session.requestCompression`: asks for compression (emits `session.compressionRequested`).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestCompressionRequest {
    pub session_id: String,
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 1000, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub reason: String,
    pub source: Option<Source>,
    pub extension_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MergeRequest {
    pub child_session_id: String,
    pub parent_session_id: String,
    pub summary: Option<String>,
    pub source: Option<Source>,
    pub extension_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MergeResponse {
    pub success: bool,
    pub handoff: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AbandonRequest {
    pub child_session_id: String,
    pub parent_session_id: String,
    pub source: Option<Source>,
    pub extension_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChildSession {
    pub session_id: String,
    #[serialize_always]
    pub branch_kind: Option<BranchKind>,
    #[serialize_always]
    pub fork_point_message_id: Option<String>,
    pub has_children: bool,
    pub message_count: i64,
    #[serialize_always]
    pub title: Option<String>,
    #[serde(default)]
    pub spawning_tool_call_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetChildrenResponse {
    pub children: Vec<ChildSession>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusCountsRequest {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StatusCounts {
    pub all: i64,
    pub active: i64,
    pub closed: i64,
    pub archived: i64,
    pub discovered: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetByAdapterSessionIdRequest {
    pub adapter_session_id: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    pub query: String,
    pub status: Option<StatusFilter>,
    pub is_imported: Option<bool>,
    pub limit: Option<i64>,
    /// Relay extension: skip this many results (paging, as in `list`).
    pub offset: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AttachRequest {
    pub session_id: String,
    pub agent: AgentSelection,
    pub role: Option<AgentRole>,
    pub initial_message: Option<MessageContent>,
    /// Relay extension: what this agent session can do; the seed's minimum when absent.
    pub capabilities: Option<AgentSessionCapabilities>,
    /// Relay extension: AG-UI discovery document.
    pub agent_capabilities: Option<AgUiCapabilities>,
    /// Relay extension: the harness's own id for the session; generated when absent.
    pub adapter_session_id: Option<String>,
    pub harness_id: Option<String>,
    /// Relay extension: the agent's handle ([`handle_of`]); `conflict` when a live agent of the
    /// workspace has it. Absent: the adapter's name, then `-2`, `-3`, … until one is free.
    pub handle: Option<String>,
    /// Relay extension: the lead agent (of the same session) whose `agent.spawn` started this
    /// one; set by the spawner.
    pub spawned_by: Option<String>,
    /// Relay extension: the placement the spawner placed it with; set by the spawner.
    pub placement: Option<crate::hosts::Placement>,
}

impl AttachRequest {
    /// An attach of `agent` to `session_id` with nothing else said: the registry's defaults
    /// (role, the seed's minimum capabilities, a free handle).
    pub fn new(session_id: String, agent: AgentSelection) -> Self {
        AttachRequest {
            session_id,
            agent,
            role: None,
            initial_message: None,
            capabilities: None,
            agent_capabilities: None,
            adapter_session_id: None,
            harness_id: None,
            handle: None,
            spawned_by: None,
            placement: None,
        }
    }
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AttachResponse {
    pub agent_id: String,
    /// Relay extension: the handle it got.
    pub handle: Option<String>,
    pub adapter_session_id: String,
    pub role: AgentRole,
    pub message_id: Option<String>,
    pub turn_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRequest {
    pub session_id: String,
    pub agent_id: String,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentRef {
    pub agent_id: String,
}

/// `agent.list`: the agents of the caller's workspace (every workspace for the mesh's own
/// services), most recently active first.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentListRequest {
    /// `live` (the default: not disposed), `all`, or a status the agents last reported (seed
    /// 000: `starting`, `active`, `idle`, `waiting`, `blocked`, `paused`, `releasing`,
    /// `released`, `offline`, `failed`): the live agents that report it (`waiting`: who waits on
    /// a person).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^(live|all|starting|active|idle|waiting|blocked|paused|releasing|released|offline|failed)$"),
        schema(pattern = "^(live|all|starting|active|idle|waiting|blocked|paused|releasing|released|offline|failed)$")
    )]
    pub status: Option<String>,
    /// Only this session's agents.
    pub session_id: Option<String>,
    /// At most 500 (50 by default).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 500),
        schema(minimum = 1, maximum = 500)
    )]
    pub limit: Option<i64>,
    #[cfg_attr(feature = "openapi", param(minimum = 0), schema(minimum = 0))]
    pub offset: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentListResponse {
    pub agents: Vec<Agent>,
    pub total: i64,
}

/// `agent.get`: one agent by id or by handle (a live agent of the caller's workspace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentGetRequest {
    /// An agent id, or a handle with or without its `@`.
    pub agent: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CapabilitiesResponse {
    pub agent_id: String,
    pub session_id: String,
    pub capabilities: AgentSessionCapabilities,
    pub agent_capabilities: Option<AgUiCapabilities>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeclareCapabilitiesRequest {
    pub agent_id: String,
    pub capabilities: Option<AgentSessionCapabilities>,
    pub agent_capabilities: Option<AgUiCapabilities>,
}

/// Relay extension of `sendMessage`: delivery context for the delivery runner (seed 001).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryRequest {
    pub mode: DeliveryMode,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    pub session_id: String,
    pub message: MessageContent,
    pub agent: Option<AgentSelection>,
    pub agent_ids: Option<AgentTargets>,
    /// What to do when a target agent is busy with a running turn (seed 002 `deliveryMode`):
    /// `enqueue` (the default: queued for it), `reject` (`conflict` naming the running turn),
    /// `interrupt` (cancel the running turn, then deliver), `rollback` (as `interrupt`, and the
    /// cancelled turn's messages are marked superseded by this one; what the agent already did
    /// is not undone).
    pub delivery_mode: Option<String>,
    pub delivery: Option<DeliveryRequest>,
    pub origin: Option<Origin>,
    pub source: Option<Source>,
    pub extension_id: Option<String>,
    pub origin_window_id: Option<String>,
    pub turn_id: Option<String>,
    /// Relay extension: a client-chosen id that makes a retried send idempotent.
    pub message_id: Option<String>,
    pub session_context: Option<Value>,
    pub skip_connector_swap_warning: Option<bool>,
    /// Relay extension: hold a text message until this Unix time in ms, then send it (a
    /// one-time schedule of the automation service, `scheduleId` in the reply).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 253402300799000_i64))]
    pub deliver_at: Option<i64>,
    /// Relay extension (seed 001): `low`, `normal`, `high` or `urgent`; urgent and high go
    /// before the others waiting for the same agent.
    pub priority: Option<crate::messaging::Priority>,
    /// Relay extension (seed 001, RFC 3339): a delivery still waiting then fails with reason
    /// `deadline`.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 64,
            pattern = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
        )
    )]
    pub deadline: Option<String>,
}

impl SendMessageRequest {
    /// A plain text message to the session, with every option left to its default.
    pub fn text(session_id: impl Into<String>, text: impl Into<String>) -> Self {
        SendMessageRequest {
            session_id: session_id.into(),
            message: MessageContent::Text(text.into()),
            agent: None,
            agent_ids: None,
            delivery_mode: None,
            delivery: None,
            origin: None,
            source: None,
            extension_id: None,
            origin_window_id: None,
            turn_id: None,
            message_id: None,
            session_context: None,
            skip_connector_swap_warning: None,
            deliver_at: None,
            priority: None,
            deadline: None,
        }
    }
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SendMessageResponse {
    pub message_id: String,
    pub session_id: String,
    pub turn_id: String,
    /// Relay extension: one delivery per target agent, committed with the message (absent on
    /// the reply to a retried send).
    pub delivery_ids: Option<Vec<String>>,
    /// Relay extension, with `deliverAt`: the schedule holding the message (`schedule.get`);
    /// `messageId` is the id it will be sent with, `turnId` is empty until then.
    pub schedule_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AcknowledgeRequest {
    pub session_id: String,
    pub message_id: String,
    pub agent_id: String,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequest {
    pub session_id: String,
    pub message_id: String,
    pub agent_id: String,
    pub outcome: Outcome,
    pub error: Option<String>,
    pub merged_into: Option<String>,
    pub superseded_by: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompleteResponse {
    pub success: bool,
    /// Set when this completion finished the turn.
    pub turn_completed: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnsResponse {
    pub turns: Vec<Turn>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessagesRequest {
    pub session_id: String,
    /// Walk the parent chain up to each fork point (the full conversation). Default true.
    pub include_ancestors: Option<bool>,
    /// Page size (default 500, at most 5,000); pages are also cut to fit one NATS message.
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page: the number of messages already read.
    pub cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessagesResponse {
    pub messages: Vec<Message>,
    /// Present when there are more: pass it as `cursor`.
    pub next_cursor: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageRequest {
    pub session_id: String,
    pub adapter_count: i64,
    pub total_calls: i64,
    pub total_input_tokens: i64,
    pub total_output_tokens: i64,
    pub total_tokens: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageResponse {
    pub acknowledged: bool,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResolveAgentConfigRequest {
    pub selection: AgentSelection,
    pub project_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResolveAgentConfigResponse {
    pub adapter_name: String,
    pub model: Option<String>,
    pub provider_config_id: Option<String>,
    pub allowed_tools: Option<Vec<String>>,
    pub disallowed_tools: Option<Vec<String>>,
    pub allowed_directories: Option<Vec<String>>,
    pub reasoning_effort: Option<ReasoningEffort>,
    pub system_prompt: Option<Value>,
}

// ---------------------------------------------------------------------------------------------
// Snapshots

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportOptions {
    #[serde(default = "yes")]
    pub include_ancestors: bool,
    #[serde(default)]
    pub include_children: bool,
    #[serde(default)]
    pub include_events: bool,
    #[serde(default)]
    pub include_tool_outputs: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            include_ancestors: true,
            include_children: false,
            include_events: false,
            include_tool_outputs: false,
        }
    }
}

pub const SNAPSHOT_VERSION: &str = "1.0";

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub version: String,
    pub exported_at: i64,
    pub options: ExportOptions,
    pub sessions: Vec<Session>,
    pub agents: Vec<Agent>,
    pub messages: Vec<Message>,
    pub turns: Vec<Turn>,
    pub events: Option<Vec<SessionEvent>>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    pub session_id: String,
    pub options: Option<ExportOptions>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportResponse {
    pub snapshot: Snapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImportRequest {
    pub snapshot: Snapshot,
    #[serde(default)]
    pub on_conflict: OnConflict,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImportError {
    pub session_id: String,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImportResponse {
    pub imported: Vec<String>,
    pub skipped: Vec<String>,
    pub errors: Vec<ImportError>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ValidateRequest {
    pub snapshot: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ValidateResponse {
    pub valid: bool,
    pub errors: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Events

/// The `session.event` envelope (Makaio's catch-all). `type` is the event key without the
/// `session.` prefix, e.g. `turn.started`; it is also published on `session.<type>`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    pub event_id: String,
    pub session_id: String,
    pub timestamp: i64,
    #[serde(rename = "type")]
    pub event_type: String,
    pub payload: Value,
    /// Relay extension: the registry's commit order.
    pub seq: Option<i64>,
}

/// A typed event payload and the key it is published under.
pub trait EventPayload: Serialize {
    const TYPE: &'static str;
}

macro_rules! event {
    ($name:ident, $ty:literal, { $($field:tt)* }) => {
        #[skip_serializing_none]
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[serde(rename_all = "camelCase")]
        pub struct $name { $($field)* }
        impl EventPayload for $name {
            const TYPE: &'static str = $ty;
        }
    };
}

pub mod events {
    use super::*;

    event!(Created, "created", {
        pub session_id: String,
        pub created_at: i64,
        #[serde(default)]
        #[serialize_always]
        pub branch_kind: Option<BranchKind>,
        #[serde(default)]
        #[serialize_always]
        pub parent_session_id: Option<String>,
        pub origin_window_id: Option<String>,
    });
    event!(Closed, "closed", { pub session_id: String, pub reason: Option<String> });
    event!(Archived, "archived", { pub session_id: String });
    event!(Purged, "purged", { pub session_id: String });
    event!(Resumed, "resumed", { pub session_id: String });
    event!(Updated, "updated", { pub session_id: String, pub changed_properties: Vec<String> });
    event!(Forked, "forked", {
        /// The new (child) session, as seed 000's `session.forked` names it.
        pub session_id: String,
        pub child_session_id: String,
        pub parent_session_id: String,
        pub fork_point: Option<String>,
    });
    event!(Merged, "merged", {
        pub child_session_id: String,
        pub parent_session_id: String,
        pub handoff: String,
    });
    event!(Abandoned, "abandoned", { pub session_id: String, pub parent_session_id: Option<String> });
    event!(Forking, "forking", {
        pub child_session_id: String,
        pub parent_session_id: String,
        pub reason: String,
    });
    event!(BranchCreated, "branch.created", {
        /// The new (child) session.
        pub session_id: String,
        pub child_session_id: String,
        pub parent_session_id: String,
        pub kind: BranchKind,
        pub fork_point_message_id: Option<String>,
        pub transforms: Option<Value>,
    });
    event!(Merging, "merging", { pub child_session_id: String, pub parent_session_id: String });
    event!(BranchMerged, "branch.merged", {
        /// The parent, which took the branch's result.
        pub session_id: String,
        pub child_session_id: String,
        pub parent_session_id: String,
        /// The handoff, as a JSON string (`{"handoff": …}`).
        pub result_json: Option<String>,
        /// The branch's last agent message, whose text the handoff defaults to.
        pub result_message_id: Option<String>,
    });
    event!(ChildCompleted, "childCompleted", {
        pub child_session_id: String,
        pub parent_session_id: String,
        /// `{reason, summary?, lastMessageId?}` of the child that closed.
        pub result: Value,
    });
    event!(Compressed, "compressed", {
        /// This event's own id (seed 002), as `session.compress` answers it.
        pub event_id: String,
        pub session_id: String,
        pub tokens_before: i64,
        pub tokens_after: Option<i64>,
        pub pipeline: Vec<Value>,
    });
    event!(Squash, "squash", {
        pub session_id: String,
        pub summary_json: String,
        pub compressed_message_ids: Option<Vec<String>>,
        pub tokens_before: Option<i64>,
        pub tokens_after: Option<i64>,
    });
    event!(ClientAccountChanged, "clientAccount.changed", {
        pub session_id: String,
        pub client_id: String,
        pub client_account_id: String,
        #[serde(default)]
        #[serialize_always]
        pub previous_client_account_id: Option<String>,
        pub last_client_identity_observation: Value,
        pub observed_at: i64,
        pub source: String,
    });
    event!(ConnectorSwapEditRequested, "connectorSwap.editRequested", {
        pub session_id: String,
        pub agent_id: String,
        pub previous_model: Option<String>,
        pub new_model: Option<String>,
        pub previous_cwd: Option<String>,
        pub new_cwd: Option<String>,
    });
    event!(CompressionRequested, "compressionRequested", {
        pub session_id: String,
        pub reason: String,
        pub source: Option<Source>,
        pub extension_id: Option<String>,
    });
    event!(AgentAdded, "agent.added", {
        pub session_id: String,
        pub agent_id: String,
        pub adapter_id: String,
        pub adapter_name: String,
        pub adapter_session_id: String,
        pub cwd: Option<String>,
        pub model: Option<String>,
        pub role: Option<AgentRole>,
    });
    event!(AgentRemoved, "agent.removed", { pub session_id: String, pub agent_id: String });
    // Relay extension: its host stopped heartbeating (its deliveries are held), or came back.
    event!(AgentOffline, "agent.offline", {
        pub session_id: String,
        pub agent_id: String,
        pub host_id: String,
        pub reason: String,
    });
    event!(AgentOnline, "agent.online", {
        pub session_id: String,
        pub agent_id: String,
        pub host_id: String,
    });
    event!(TurnStarted, "turn.started", {
        pub session_id: String,
        pub turn_id: String,
        pub turn_number: i64,
        pub message_id: String,
        pub agent_ids: Vec<String>,
        pub initiator: Option<Initiator>,
    });
    event!(TurnCompleted, "turn.completed", {
        pub session_id: String,
        pub turn_id: String,
        pub turn_number: i64,
        pub success: bool,
        pub error: Option<String>,
        pub initiator: Option<Initiator>,
        /// `cancelled` for a turn cancelled while it ran; absent otherwise (`success` says).
        pub outcome: Option<Outcome>,
        /// The agents whose CLI was interrupted (a cancelled turn).
        pub interrupted: Option<Vec<String>>,
    });
    event!(UserMessageSent, "user_message.sent", {
        pub session_id: String,
        pub message_id: String,
        pub turn_id: String,
        pub turn_number: i64,
        pub agent_ids: Vec<String>,
        pub content: MessageContent,
        pub origin: Option<Origin>,
        pub source: Option<Source>,
    });
    event!(UserMessageAcknowledged, "user_message.acknowledged", {
        pub session_id: String,
        pub message_id: String,
        pub agent_id: String,
        pub turn_id: String,
        pub turn_number: i64,
    });
    event!(UserMessageCompleted, "user_message.completed", {
        pub session_id: String,
        pub message_id: String,
        pub agent_id: String,
        pub turn_id: String,
        pub turn_number: i64,
        pub outcome: Outcome,
        pub error: Option<String>,
        pub merged_into: Option<String>,
        pub superseded_by: Option<String>,
    });
    // Kept as `message.sent` in the log (no `session.` prefix): seed 000's event of the agent
    // session that sent a relay message, once per message.
    event!(MessageSent, "message.sent", {
        /// The sending agent's session.
        pub session_id: String,
        /// The sending agent.
        pub agent_id: Option<String>,
        pub message_id: String,
        pub conversation: String,
    });
    event!(MessageReceived, "message.received", {
        /// The recipient's session.
        pub session_id: String,
        pub message_id: String,
        pub delivery_id: String,
        pub agent_id: String,
        pub reason: String,
    });
    // Kept as `message.exchanged` in the log (no `session.` prefix): seed 003's relay event.
    event!(MessageExchanged, "message.exchanged", {
        pub message_id: String,
        /// The sending agent's session, when an agent sent it.
        pub session_id: Option<String>,
        pub from: String,
        /// Where it was addressed: `@bob`, `@alice,@bob` (a group) or `#ops`.
        pub to: String,
        /// Who got a delivery of it.
        pub recipients: Vec<String>,
        pub body: String,
        /// `dm`, `group` or `channel`.
        pub kind: String,
        pub thread: Option<String>,
        pub channel: Option<String>,
        pub conversation: String,
        pub failed: Vec<String>,
    });
    // Kept as they are in the log (no `session.` prefix): seed 000's action events.
    event!(ActionInvoked, "action.invoked", {
        /// The exposing agent's session.
        pub session_id: String,
        pub agent_id: String,
        pub action: String,
        pub invocation_id: String,
        pub caller: String,
    });
    event!(ActionCompleted, "action.completed", {
        pub session_id: String,
        pub agent_id: String,
        pub action: String,
        pub invocation_id: String,
        pub duration_ms: i64,
    });
    event!(ActionFailed, "action.failed", {
        pub session_id: String,
        pub agent_id: String,
        pub action: String,
        pub invocation_id: String,
        pub error: String,
        /// Whether the same call may succeed later (no answer in time, the agent gone).
        pub retryable: bool,
    });
    event!(ActionDenied, "action.denied", {
        pub session_id: String,
        pub agent_id: String,
        pub action: String,
        pub invocation_id: String,
        pub caller: String,
        /// Which policy or person refused it, and why.
        pub reason: String,
    });
    // Kept as they are in the log (no `session.` prefix): seed 003's relay events.
    event!(ConsensusProposed, "consensus.proposed", {
        pub proposal_id: String,
        pub question: String,
        pub options: Vec<String>,
        pub proposer: String,
        pub voters: Vec<String>,
        pub quorum: i64,
        pub deadline: i64,
    });
    event!(ConsensusVoted, "consensus.voted", {
        pub proposal_id: String,
        pub voter: String,
        pub choice: String,
    });
    event!(ConsensusResolved, "consensus.resolved", {
        pub proposal_id: String,
        /// `resolved` (an option reached the quorum, or every voter voted), `expired` or
        /// `cancelled`.
        pub status: String,
        /// The option that reached the quorum, if one did.
        pub outcome: Option<String>,
        pub tally: std::collections::BTreeMap<String, i64>,
        pub reason: Option<String>,
    });
    event!(Usage, "usage", {
        pub session_id: String,
        pub adapter_count: i64,
        pub total_calls: i64,
        pub total_input_tokens: i64,
        pub total_output_tokens: i64,
        pub total_tokens: i64,
    });

    #[skip_serializing_none]
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[serde(rename_all = "camelCase")]
    pub struct Initiator {
        pub source: Source,
        pub source_id: Option<String>,
    }

    /// Every event type the registry emits, for documentation and drift tests.
    pub const REGISTRY_EVENT_TYPES: &[&str] = &[
        Created::TYPE,
        Closed::TYPE,
        Archived::TYPE,
        Purged::TYPE,
        Resumed::TYPE,
        Updated::TYPE,
        Forked::TYPE,
        Merged::TYPE,
        Abandoned::TYPE,
        Forking::TYPE,
        BranchCreated::TYPE,
        Merging::TYPE,
        BranchMerged::TYPE,
        ChildCompleted::TYPE,
        Compressed::TYPE,
        Squash::TYPE,
        CompressionRequested::TYPE,
        ClientAccountChanged::TYPE,
        ConnectorSwapEditRequested::TYPE,
        AgentAdded::TYPE,
        AgentRemoved::TYPE,
        AgentOffline::TYPE,
        AgentOnline::TYPE,
        TurnStarted::TYPE,
        TurnCompleted::TYPE,
        UserMessageSent::TYPE,
        UserMessageAcknowledged::TYPE,
        UserMessageCompleted::TYPE,
        MessageSent::TYPE,
        MessageReceived::TYPE,
        MessageExchanged::TYPE,
        ActionInvoked::TYPE,
        ActionCompleted::TYPE,
        ActionFailed::TYPE,
        ActionDenied::TYPE,
        ConsensusProposed::TYPE,
        ConsensusVoted::TYPE,
        ConsensusResolved::TYPE,
        Usage::TYPE,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn message_content_accepts_text_one_block_and_many_blocks() {
        for v in [
            json!("hello"),
            json!({"blocks": {"type": "text", "text": "hi"}}),
            json!({"blocks": [{"type": "text", "text": "hi"}], "role": "user"}),
        ] {
            serde_json::from_value::<MessageContent>(v.clone()).unwrap_or_else(|e| panic!("{v}: {e}"));
        }
    }

    #[test]
    fn agent_targets_accept_all_literal_and_list_but_not_other_strings() {
        assert_eq!(
            serde_json::from_value::<AgentTargets>(json!("all")).unwrap(),
            AgentTargets::All(AllLiteral::All)
        );
        assert!(serde_json::from_value::<AgentTargets>(json!(["a"])).is_ok());
        assert!(serde_json::from_value::<AgentTargets>(json!("some")).is_err());
    }

    #[test]
    fn update_distinguishes_absent_from_explicit_null() {
        let absent: UpdateRequest = serde_json::from_value(json!({"sessionId": "s"})).unwrap();
        assert_eq!(absent.approval_policy_override, None);
        let null: UpdateRequest =
            serde_json::from_value(json!({"sessionId": "s", "approvalPolicyOverride": null})).unwrap();
        assert_eq!(null.approval_policy_override, Some(None));
    }

    #[test]
    fn agent_selection_keeps_unknown_keys() {
        let sel: AgentSelection =
            serde_json::from_value(json!({"kind": "adapter", "adapterName": "x", "temperature": 0.2})).unwrap();
        assert_eq!(sel.extra.get("temperature"), Some(&json!(0.2)));
        assert_eq!(serde_json::to_value(&sel).unwrap()["temperature"], json!(0.2));
    }

    #[test]
    fn export_options_default_to_ancestors_only() {
        let o: ExportOptions = serde_json::from_value(json!({})).unwrap();
        assert_eq!(o, ExportOptions::default());
        assert!(o.include_ancestors && !o.include_events);
    }
}

/// `session.turn.cancel`: the turn (default: the session's running one) is cancelled; its
/// agents' CLIs are interrupted the way each CLI expects. Held deliveries stay queued.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CancelTurnRequest {
    pub session_id: String,
    pub turn_id: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CancelTurnResponse {
    pub turn: Turn,
    /// Agents whose CLI was busy and was interrupted.
    pub interrupted: Vec<String>,
    /// Agents of the turn that were not busy (nothing to interrupt).
    pub idle: Vec<String>,
    /// Agents whose harness did not answer (not running, or gone).
    pub unreachable: Vec<String>,
}

/// Seed 000 AgentStatus: reported through events; `on-idle` deliveries wait for a safe one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum AgentStatus {
    Starting,
    Active,
    Idle,
    Waiting,
    Blocked,
    Paused,
    Releasing,
    Released,
    Offline,
    Failed,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}
