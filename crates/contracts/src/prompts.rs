//! Personas and profiles (seed 002 `session.resolveSystemPrompt`): system prompts a workspace
//! stores and refers to by id. An agent attached with `{kind: "persona", personaId}` (or given a
//! `profileId`) gets the prompts `session.resolveSystemPrompt` puts together.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum PromptKind {
    /// Who the agent is (a reviewer, a planner).
    Persona,
    /// How it works in this workspace (conventions, tools, tone).
    Profile,
}

impl PromptKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `prompt.put`: creates or replaces one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutPromptRequest {
    pub kind: PromptKind,
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub id: String,
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 200, pattern = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$")
    )]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 100000, pattern = "^[^\\u0000]*$"))]
    pub system_prompt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub kind: PromptKind,
    pub id: String,
    pub name: String,
    pub system_prompt: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `prompt.get`, `prompt.delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptRef {
    pub kind: PromptKind,
    #[cfg_attr(feature = "openapi", schema(max_length = 128, pattern = "^[A-Za-z0-9_.:-]{1,128}$"))]
    pub id: String,
}

/// `prompt.list`: the workspace's personas or profiles (both when no kind), by id.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListPromptsRequest {
    pub kind: Option<PromptKind>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PromptList {
    pub prompts: Vec<Prompt>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PromptDeleted {
    pub deleted: bool,
}

/// `session.resolveSystemPrompt` (seed 002).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveSystemPromptRequest {
    pub session_id: String,
    /// Else the persona of the session's lead agent (or its first agent that has one).
    pub persona_id: Option<String>,
    /// Else the profile of that agent.
    pub profile_id: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResolveSystemPromptResponse {
    /// The profile's prompt, then the persona's, a blank line apart; empty when neither.
    pub system_prompt: String,
    pub persona_name: Option<String>,
    pub profile_name: Option<String>,
}
