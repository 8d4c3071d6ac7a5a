//! Permission requests and questions between a harness and the permission manager (seed 003
//! §2.3–2.4). The harness asks; the answer comes in the reply when a policy decides at once,
//! or later on `agent.<agentId>.permission` / `agent.<agentId>.question` when a human must.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

pub const REQUEST: &str = "permission.request";
pub const ASK: &str = "question.ask";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Approved,
    Denied,
    Pending,
}

/// `permission.request`, sent by a harness that saw a permission prompt.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    pub agent_id: String,
    pub session_id: Option<String>,
    pub tool: String,
    pub command: Option<String>,
    pub file_path: Option<String>,
    pub description: String,
}

/// The manager's answer to `permission.request` (a decision now, or `pending`), and what it
/// sends the harness on `agent.<agentId>.permission` once a pending request is decided.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecision {
    pub request_id: String,
    pub decision: Decision,
    pub reason: Option<String>,
}

/// `question.ask`, sent by a harness that saw a question prompt.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    pub agent_id: String,
    pub session_id: Option<String>,
    pub question: String,
    pub options: Vec<String>,
}

/// The answer now (a policy or default), or `answer: null` (answered later on
/// `agent.<agentId>.question`).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionReply {
    pub question_id: String,
    pub answer: Option<String>,
}

/// Sent to the harness on `agent.<agentId>.question` once answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionAnswer {
    pub question_id: String,
    pub answer: String,
}
