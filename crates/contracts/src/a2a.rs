//! The A2A wire types other contracts name: a task's address, and the push a webhook made by
//! the A2A push-notification calls follows. The protocol itself (the task fold, its JSON, the
//! log reads) is the `relay-a2a` crate.

use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;

/// The header A2A push notifications carry the client's token in.
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// A task's address: id `<agentId>:<messageId>`, context the agent's session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskKey {
    #[cfg_attr(feature = "openapi", schema(max_length = 256, pattern = "^[^\\u0000]+$"))]
    pub agent_id: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 256, pattern = "^[^\\u0000]+$"))]
    pub session_id: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 256, pattern = "^[^\\u0000]+$"))]
    pub message_id: String,
}

/// A webhook that follows one A2A task (made by the A2A push-notification calls): its updates
/// are posted as A2A `StreamResponse`s with the client's token in
/// [`NOTIFICATION_TOKEN_HEADER`], instead of the workspace's events.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct A2aTaskPush {
    pub task: TaskKey,
    /// Printable ASCII (it goes back in an HTTP header).
    #[cfg_attr(feature = "openapi", schema(max_length = 1000, pattern = "^[ -~]*$"))]
    pub token: Option<String>,
}

impl A2aTaskPush {
    /// What the push is refused for: ids empty, too long or with NUL, a token too long.
    pub fn check(&self) -> Result<(), String> {
        let k = &self.task;
        for (name, v) in [
            ("agentId", &k.agent_id),
            ("sessionId", &k.session_id),
            ("messageId", &k.message_id),
        ] {
            if v.is_empty() || v.chars().count() > 256 || v.contains('\0') {
                return Err(format!("a2aTask.task.{name}: 1 to 256 characters, without NUL"));
            }
        }
        match &self.token {
            Some(t) if t.len() > 1000 || !t.bytes().all(|b| (b' '..=b'~').contains(&b)) => {
                Err("a2aTask.token: at most 1000 printable ASCII characters".into())
            }
            _ => Ok(()),
        }
    }
}

impl TaskKey {
    pub fn id(&self) -> String {
        format!("{}:{}", self.agent_id, self.message_id)
    }

    /// The agent and message of a task id.
    pub fn split(task_id: &str) -> Option<(&str, &str)> {
        task_id.split_once(':').filter(|(a, m)| !a.is_empty() && !m.is_empty())
    }
}
