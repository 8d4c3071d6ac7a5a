//! Actions (seed 000 `actions.expose` / `actions.invoke`): tools an agent offers the others of
//! its workspace. An agent whose session declares `actions.expose` registers them with
//! `action.expose` (its whole set, replaced); `action.list` shows a caller only those it may
//! invoke (`availableTo`); a released agent's actions are gone with it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// The longest action name.
pub const MAX_NAME_CHARS: usize = 64;
/// The most actions one agent exposes.
pub const MAX_ACTIONS: usize = 64;
/// The largest input or output schema, as JSON text.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The largest set of schemas one agent exposes, all together (its AG-UI document carries them).
pub const MAX_TOTAL_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting a schema may have.
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// Whether `name` may name an action: 1 to [`MAX_NAME_CHARS`] letters, digits, `_`, `-` or
/// `.`, starting with a letter.
pub fn is_action_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// One action, as its agent exposes it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionSpec {
    /// Unique among the agent's actions ([`is_action_name`]).
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z][A-Za-z0-9_.-]{0,63}$"))]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub description: Option<String>,
    /// JSON Schema of the input (an object); local `$ref`s only — a schema never makes the
    /// mesh fetch anything.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub input_schema: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output_schema: Option<Value>,
    /// Who may invoke it: `*` (default), `@handle`, `#channel` (its members), or a role
    /// (`role:operator`, `role:admin`, `role:agent`).
    pub available_to: Option<Vec<String>>,
}

/// `action.expose`: an agent's whole set of actions (an empty list withdraws them). A harness
/// names its own agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExposeRequest {
    pub agent_id: String,
    pub actions: Vec<ActionSpec>,
}

/// An exposed action with the agent that serves it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Action {
    pub agent_id: String,
    pub handle: Option<String>,
    pub session_id: String,
    pub name: String,
    pub description: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub input_schema: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output_schema: Option<Value>,
    pub available_to: Vec<String>,
    pub exposed_at: i64,
}

/// The longest an invocation waits for its agent's answer, and the default.
pub const MAX_INVOKE_TIMEOUT_MS: u64 = 30_000;

/// `action.invoke`: runs an agent's action with `input`, as the authenticated caller.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvokeRequest {
    /// The agent that exposes it (id or `@handle`).
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^@?[A-Za-z0-9_-]{1,128}$"))]
    pub agent: String,
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z][A-Za-z0-9_.-]{0,63}$"))]
    pub action: String,
    /// Checked against the action's input schema; `{}` when absent.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub input: Option<Value>,
    /// The same id again from the same caller answers with the first call's outcome instead of
    /// running the action twice.
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub invocation_id: Option<String>,
    /// How long to wait for the agent's answer, in ms (1 to 30,000; default 30,000; a
    /// fraction is rounded up).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 30000))]
    pub timeout_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum InvocationStatus {
    /// A policy wants a person's decision (`permissionRequestId`): the call waits for it.
    Pending,
    Running,
    Completed,
    Failed,
    /// A policy or a person refused it (`error` says which and why); the agent never got it.
    Denied,
}

/// One invocation and, once it ended, its outcome.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    pub invocation_id: String,
    pub agent_id: String,
    pub action: String,
    pub status: InvocationStatus,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub output: Option<Value>,
    pub error: Option<String>,
    /// The permission request a person decides, while `pending` (and after).
    pub permission_request_id: Option<String>,
    pub started_at: i64,
    pub completed_at: Option<i64>,
}

/// What the exposing agent's harness gets on `agent.<agentId>.invoke`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionCall {
    pub invocation_id: String,
    pub action: String,
    pub input: Value,
    /// Who invokes it: `agent:<id>`, `operator:<key>`, `service:<name>`, …
    pub caller: String,
    pub timeout_ms: u64,
}

/// The harness's answer: the action's `output`, or the `error` it failed with.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionAnswer {
    pub output: Option<Value>,
    pub error: Option<String>,
}

/// `action.list`: the actions the caller may invoke, by agent and name.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListActionsRequest {
    /// Only this agent's (id or handle).
    #[cfg_attr(
        feature = "openapi",
        param(max_length = 128, pattern = "^@?[A-Za-z0-9_-]{1,128}$"),
        schema(max_length = 128, pattern = "^@?[A-Za-z0-9_-]{1,128}$")
    )]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActionList {
    pub actions: Vec<Action>,
}

/// `session.agent.setTools`, from coordination: an agent that exposes actions lists them in
/// its AG-UI `tools.items` (checked there: attached, `actions.expose` declared).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetToolsRequest {
    pub agent_id: String,
    /// `{name, description, parameters}` per action.
    pub items: Vec<Value>,
}
