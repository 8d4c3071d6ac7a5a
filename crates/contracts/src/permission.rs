//! Permission requests and questions between a harness and the permission manager (seed 003
//! §2.3–2.4). The harness asks; the answer comes in the reply when a policy decides at once,
//! or later on `agent.<agentId>.permission` / `agent.<agentId>.question` when a human must.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Decision {
    Approved,
    Denied,
    Pending,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Seed 003 §2.3 risk levels, lowest first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Risk {
    Low,
    Medium,
    High,
    Critical,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `permission.request`, sent by a harness that saw a permission prompt.
#[serde_with::serde_as]
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    /// Chosen by the harness so it can listen for the decision before asking; asking again with
    /// the same id returns the request already stored. A new id is made when absent.
    pub request_id: Option<String>,
    pub agent_id: String,
    pub session_id: String,
    pub tool: String,
    pub command: Option<String>,
    pub file_path: Option<String>,
    /// What the prompt said; empty when absent or null (not every CLI describes a prompt).
    #[serde(default)]
    #[serde_as(deserialize_as = "serde_with::DefaultOnNull")]
    pub description: String,
}

/// The manager's answer to `permission.request` (a decision now, or `pending`), and what it
/// sends the harness on `agent.<agentId>.permission` once a pending request is decided.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PermissionDecision {
    pub request_id: String,
    pub decision: Decision,
    pub reason: Option<String>,
    pub risk_level: Option<Risk>,
    /// What decided: `policy:<name>`, `session:<override>`, `human` or `expiry`.
    pub decided_by: Option<String>,
}

/// A stored permission request, as `permission.get` and `permission.list` return it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Permission {
    pub request_id: String,
    pub agent_id: String,
    pub session_id: String,
    pub tool: String,
    pub command: Option<String>,
    pub file_path: Option<String>,
    pub description: String,
    pub risk_level: Risk,
    pub status: Decision,
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub requested_at: i64,
    pub decided_at: Option<i64>,
    /// When a pending request is decided by the expiry action.
    pub expires_at: Option<i64>,
}

/// Filters of `permission.list` and `question.list`. Without `status`, pending ones only.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ListRequest {
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    /// `pending` (default), a final status, or `all`.
    pub status: Option<String>,
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PermissionList {
    pub permissions: Vec<Permission>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetPermissionRequest {
    pub request_id: String,
}

/// `permission.approve` / `permission.deny` by a human (or any client acting for one).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DecideRequest {
    pub request_id: String,
    pub reason: Option<String>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DecideResponse {
    pub success: bool,
    pub permission: Permission,
    /// Whether the harness that asked took the decision (it may have gone away; the
    /// decision is stored either way).
    pub harness_notified: bool,
}

/// `question.ask`, sent by a harness that saw a question prompt.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    /// As `PermissionRequest::request_id`.
    pub question_id: Option<String>,
    pub agent_id: String,
    pub session_id: String,
    pub question: String,
    #[serde(default)]
    pub options: Vec<String>,
}

/// The answer now (a policy or default), or `answer: null` (answered later on
/// `agent.<agentId>.question`).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuestionReply {
    pub question_id: String,
    pub answer: Option<String>,
}

/// Sent to the harness on `agent.<agentId>.question` once answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QuestionAnswer {
    pub question_id: String,
    pub answer: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum QuestionStatus {
    Pending,
    Answered,
    Expired,
}

/// A stored question, as `question.get` and `question.list` return it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Question {
    pub question_id: String,
    pub agent_id: String,
    pub session_id: String,
    pub question: String,
    pub options: Vec<String>,
    pub status: QuestionStatus,
    pub answer: Option<String>,
    pub asked_at: i64,
    pub answered_at: Option<i64>,
    pub expires_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuestionList {
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct GetQuestionRequest {
    pub question_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AnswerRequest {
    pub question_id: String,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AnswerResponse {
    pub success: bool,
    pub question: Question,
    pub harness_notified: bool,
}

/// The events the permission manager writes, typed: every field is written, `null` when unset,
/// as seed 003's payloads show them.
pub mod events {
    use super::{Decision, Permission, Question, QuestionStatus, Risk};
    use crate::session::EventPayload;
    use serde::{Deserialize, Serialize};

    /// `permission.requested`: a request stored pending for a person.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct PermissionRequested {
        pub request_id: String,
        pub agent_id: String,
        pub session_id: String,
        pub tool: String,
        pub command: Option<String>,
        pub file_path: Option<String>,
        pub description: String,
        pub risk_level: Risk,
        pub requested_at: i64,
        pub expires_at: Option<i64>,
    }

    /// `permission.resolved`: decided by a policy, a person or its expiry.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct PermissionResolved {
        pub request_id: String,
        pub agent_id: String,
        pub session_id: String,
        pub tool: String,
        pub decision: Decision,
        pub decided_by: Option<String>,
        pub reason: Option<String>,
        pub risk_level: Risk,
    }

    /// `question.requested`: an agent's question, waiting for an answer.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct QuestionRequested {
        pub question_id: String,
        pub agent_id: String,
        pub session_id: String,
        pub question: String,
        pub options: Vec<String>,
        pub asked_at: i64,
        pub expires_at: Option<i64>,
    }

    /// `question.resolved`: answered, or expired.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct QuestionResolved {
        pub question_id: String,
        pub agent_id: String,
        pub session_id: String,
        pub answer: Option<String>,
        pub status: QuestionStatus,
    }

    impl EventPayload for PermissionRequested {
        const TYPE: &'static str = "permission.requested";
    }
    impl EventPayload for PermissionResolved {
        const TYPE: &'static str = "permission.resolved";
    }
    impl EventPayload for QuestionRequested {
        const TYPE: &'static str = "question.requested";
    }
    impl EventPayload for QuestionResolved {
        const TYPE: &'static str = "question.resolved";
    }

    impl From<&Permission> for PermissionRequested {
        fn from(p: &Permission) -> Self {
            PermissionRequested {
                request_id: p.request_id.clone(),
                agent_id: p.agent_id.clone(),
                session_id: p.session_id.clone(),
                tool: p.tool.clone(),
                command: p.command.clone(),
                file_path: p.file_path.clone(),
                description: p.description.clone(),
                risk_level: p.risk_level,
                requested_at: p.requested_at,
                expires_at: p.expires_at,
            }
        }
    }

    impl From<&Permission> for PermissionResolved {
        fn from(p: &Permission) -> Self {
            PermissionResolved {
                request_id: p.request_id.clone(),
                agent_id: p.agent_id.clone(),
                session_id: p.session_id.clone(),
                tool: p.tool.clone(),
                decision: p.status,
                decided_by: p.decided_by.clone(),
                reason: p.reason.clone(),
                risk_level: p.risk_level,
            }
        }
    }

    impl From<&Question> for QuestionRequested {
        fn from(q: &Question) -> Self {
            QuestionRequested {
                question_id: q.question_id.clone(),
                agent_id: q.agent_id.clone(),
                session_id: q.session_id.clone(),
                question: q.question.clone(),
                options: q.options.clone(),
                asked_at: q.asked_at,
                expires_at: q.expires_at,
            }
        }
    }

    impl From<&Question> for QuestionResolved {
        fn from(q: &Question) -> Self {
            QuestionResolved {
                question_id: q.question_id.clone(),
                agent_id: q.agent_id.clone(),
                session_id: q.session_id.clone(),
                answer: q.answer.clone(),
                status: q.status,
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_field_of_an_event_is_written_null_when_unset() {
            let resolved = PermissionResolved {
                request_id: "r".into(),
                agent_id: "a".into(),
                session_id: "s".into(),
                tool: "Bash".into(),
                decision: Decision::Denied,
                decided_by: None,
                reason: None,
                risk_level: Risk::High,
            };
            let v = serde_json::to_value(&resolved).unwrap();
            assert_eq!(v["decidedBy"], serde_json::Value::Null);
            assert_eq!(v.as_object().unwrap().len(), 8, "{v}");
            assert_eq!(v["decision"], "denied");
            assert_eq!(PermissionResolved::TYPE, "permission.resolved");
        }
    }
}
