//! Token usage and cost (seed 003 §6) and the context window of a session (seed 002
//! `session.getContextWindowState`), answered by the cost aggregator.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// Emitted (and appended to the event log) when spending crosses a configured budget.
pub const BUDGET_EXCEEDED: &str = "budget.exceeded";

/// Prices of one model in USD per million tokens (seed 003 §6.4), plus its context window.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CostModel {
    /// Matched exactly, else as the longest prefix of the reported model
    /// (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`).
    pub model: String,
    pub input_per1_m: f64,
    pub output_per1_m: f64,
    pub cache_read_per1_m: Option<f64>,
    pub cache_write_per1_m: Option<f64>,
    /// Tokens the model's context window holds (for `session.getContextWindowState`).
    pub context_window: Option<i64>,
}

/// `cost.report`: every filter optional; `since`/`until` are Unix ms of the usage events.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams), into_params(parameter_in = Query))]
pub struct ReportRequest {
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub model: Option<String>,
}

/// Seed 003 §6.5 `CostBreakdown`, with the cache tokens beside it. `totalTokens` counts every
/// token: input, output, cache read and write, and usage reported without a split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub total_tokens: i64,
    pub estimated_cost_usd: f64,
    /// Usage events folded in.
    pub events: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub total: Breakdown,
    pub by_agent: BTreeMap<String, Breakdown>,
    pub by_model: BTreeMap<String, Breakdown>,
    pub by_session: BTreeMap<String, Breakdown>,
    /// Models seen with no price: their tokens are counted, their cost is 0.
    pub unpriced_models: Vec<String>,
}

/// `cost.models` takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ModelsRequest {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ModelsResponse {
    pub models: Vec<CostModel>,
    /// Where they came from: the file's path, or `built-in`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContextWindowRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ContextLevel {
    Ok,
    Warn,
    Critical,
}

/// Seed 002 `getContextWindowState.response.state`: the fullest agent of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContextWindowState {
    pub current_tokens: i64,
    pub last_updated_at: i64,
    pub level: ContextLevel,
    pub max_tokens: i64,
    pub percentage: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContextWindowResponse {
    pub state: Option<ContextWindowState>,
}

/// Payload of `budget.exceeded`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetExceeded {
    pub budget: String,
    /// `session` or `agent`.
    pub scope: String,
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub limit_usd: f64,
    pub spent_usd: f64,
    /// Agents whose deliveries are paused because of it.
    pub paused_agents: Vec<String>,
}

/// `cost.budgets` takes no arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetsRequest {}

/// The configured budgets and how close the spend of the caller's sessions or agents is to each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetsResponse {
    pub budgets: Vec<BudgetStatus>,
}

/// One `[[costs.budgets]]` entry with the spend it watches.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetStatus {
    pub name: String,
    /// `session` or `agent`.
    pub scope: String,
    /// The one session or agent it limits; absent when it limits each of them.
    pub id: Option<String>,
    pub limit_usd: f64,
    /// Whether crossing it pauses the agents' deliveries.
    pub pause: bool,
    /// The sessions or agents with spend under it, the largest first (at most 20).
    pub spending: Vec<BudgetSpend>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct BudgetSpend {
    /// The session or agent id.
    pub key: String,
    pub spent_usd: f64,
    /// `spentUsd / limitUsd` (1 or more: crossed); 1 for a zero limit with any spend.
    pub fraction: f64,
    /// When the spend crossed the limit (Unix ms); absent while under it.
    pub exceeded_at: Option<i64>,
}
