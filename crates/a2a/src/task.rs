//! The task fold: one message to an agent is an A2A task, and its state is the fold of the
//! session's events from that message's `session.user_message.sent` on.

use relay_contracts::a2a::TaskKey;
use relay_contracts::events::Event;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The event that begins a task.
pub const SENT: &str = "session.user_message.sent";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
pub enum TaskState {
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    #[strum(serialize = "TASK_STATE_SUBMITTED")]
    Submitted,
    #[serde(rename = "TASK_STATE_WORKING")]
    #[strum(serialize = "TASK_STATE_WORKING")]
    Working,
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    #[strum(serialize = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    #[serde(rename = "TASK_STATE_COMPLETED")]
    #[strum(serialize = "TASK_STATE_COMPLETED")]
    Completed,
    #[serde(rename = "TASK_STATE_FAILED")]
    #[strum(serialize = "TASK_STATE_FAILED")]
    Failed,
    #[serde(rename = "TASK_STATE_CANCELED")]
    #[strum(serialize = "TASK_STATE_CANCELED")]
    Canceled,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What a task waits for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "id")]
pub enum Pending {
    Permission(String),
    Question(String),
}

/// What the last event changed, for a stream or a push to send.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    Status,
    Artifact(String),
}

/// A task's state, folded from its events in seq order. Serializable: automation keeps it with
/// a push subscription between pages of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskFold {
    pub started: bool,
    /// The next message for the agent began another task: this one's events have ended.
    pub superseded: bool,
    pub state: TaskState,
    pub turn_id: Option<String>,
    /// The agent has started on it (so its next idle completes it).
    pub busy: bool,
    pub pending: Option<Pending>,
    pub status_text: Option<String>,
    /// The agent's text (structured CLIs).
    pub text: Vec<String>,
    /// A terminal CLI's latest screen: its answer when it gives no text.
    pub screen: Option<String>,
    /// The answer is the screen, taken at completion (not streamed as it came).
    pub screen_answer: bool,
    pub last_seq: i64,
}

impl Default for TaskFold {
    fn default() -> TaskFold {
        TaskFold {
            started: false,
            superseded: false,
            state: TaskState::Submitted,
            turn_id: None,
            busy: false,
            pending: None,
            status_text: None,
            text: Vec::new(),
            screen: None,
            screen_answer: false,
            last_seq: 0,
        }
    }
}

/// Whether `e` (a `session.user_message.sent`) sends to `agent_id`.
pub fn sends_to(e: &Event, agent_id: &str) -> bool {
    e.payload
        .get("agentIds")
        .and_then(Value::as_array)
        .is_some_and(|ids| ids.iter().any(|i| i.as_str() == Some(agent_id)))
}

impl TaskFold {
    pub fn terminal(&self) -> bool {
        matches!(
            self.state,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled
        )
    }

    /// Whether no later event is the task's: it ended, or the next message for its agent
    /// began another task.
    pub fn ended(&self) -> bool {
        self.terminal() || self.superseded
    }

    /// Whether a stream of its updates stops here: it ended, or it waits for input (a client
    /// answers, then follows again).
    pub fn stops(&self) -> bool {
        self.ended() || self.state == TaskState::InputRequired
    }

    fn set(&mut self, state: TaskState, text: Option<String>) -> Option<Update> {
        if self.state == state && text.is_none() {
            return None;
        }
        self.state = state;
        self.status_text = text;
        Some(Update::Status)
    }

    /// Applies one event of the task's session; what it changed.
    pub fn apply(&mut self, e: &Event, key: &TaskKey) -> Option<Update> {
        let p = &e.payload;
        let str_of = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        if e.event_type == SENT {
            if str_of("messageId") == key.message_id && !self.started {
                self.started = true;
                self.last_seq = e.seq;
                self.turn_id = p.get("turnId").and_then(Value::as_str).map(String::from);
                return Some(Update::Status);
            }
            if self.started && sends_to(e, &key.agent_id) {
                self.superseded = true;
            }
            return None;
        }
        if !self.started || self.ended() || e.seq <= self.last_seq {
            return None;
        }
        if e.agent_id.as_deref().is_some_and(|a| a != key.agent_id) {
            return None;
        }
        // A delivery of another message to the agent is not this task's.
        if e.event_type.starts_with("delivery.")
            && p.get("messageId")
                .and_then(Value::as_str)
                .is_some_and(|m| m != key.message_id)
        {
            return None;
        }
        self.last_seq = e.seq;
        match e.event_type.as_str() {
            // Accepted: the harness holds it, perhaps until the CLI is ready.
            "delivery.accepted" => self.set(TaskState::Working, None),
            // Given to the agent: its next idle is the end of the work on it. (Not a non-idle
            // status: an agent still starting up shows one before it is given anything.)
            "delivery.delivered" | "tool.called" => {
                self.busy = true;
                self.set(TaskState::Working, None)
            }
            "transcript.chunk" => {
                let chunk = p.get("chunk").cloned().unwrap_or_default();
                let content = chunk.get("content").and_then(Value::as_str).unwrap_or_default();
                match chunk.get("role").and_then(Value::as_str) {
                    // The harness typed a message into the CLI (in its own event order, so
                    // before the idle that follows the work on it).
                    Some("user") => {
                        self.busy = true;
                        self.set(TaskState::Working, None)
                    }
                    Some("agent") if !content.is_empty() => {
                        self.busy = true;
                        self.text.push(content.to_string());
                        Some(Update::Artifact(content.to_string()))
                    }
                    _ => None,
                }
            }
            "terminal.screen" => {
                self.screen = Some(str_of("text"));
                None
            }
            "permission.requested" => {
                self.pending = Some(Pending::Permission(str_of("requestId")));
                let what = p
                    .get("description")
                    .and_then(Value::as_str)
                    .map_or_else(|| str_of("tool"), String::from);
                let text = format!("permission requested: {what} (answer approve or deny)");
                self.set(TaskState::InputRequired, Some(text))
            }
            "question.requested" => {
                self.pending = Some(Pending::Question(str_of("questionId")));
                self.set(TaskState::InputRequired, Some(str_of("question")))
            }
            "permission.resolved" | "question.answered" => {
                self.pending = None;
                self.set(TaskState::Working, None)
            }
            "status.changed" => match p.get("status").and_then(Value::as_str).unwrap_or_default() {
                "idle" if self.busy && self.pending.is_none() => self.complete(),
                "idle" | "starting" => None,
                "offline" | "released" | "failed" => {
                    let text = format!("the agent went {}", str_of("status"));
                    self.set(TaskState::Failed, Some(text))
                }
                // Waiting for an answer: the harness's own "blocked" may land after the request.
                _ if self.pending.is_some() => None,
                _ => self.set(TaskState::Working, None),
            },
            "session.turn.completed" if p.get("turnId").and_then(Value::as_str) == self.turn_id.as_deref() => {
                if p.get("success").and_then(Value::as_bool) == Some(true) {
                    self.complete()
                } else if str_of("outcome") == "cancelled" {
                    self.set(TaskState::Canceled, None)
                } else {
                    self.set(TaskState::Failed, Some(str_of("error")))
                }
            }
            "delivery.failed" => self.set(TaskState::Failed, Some(format!("not delivered: {}", str_of("reason")))),
            _ => None,
        }
    }

    fn complete(&mut self) -> Option<Update> {
        // A terminal CLI's answer is its screen.
        if self.text.is_empty()
            && let Some(screen) = self.screen.take()
        {
            self.text.push(screen);
            self.screen_answer = true;
        }
        self.set(TaskState::Completed, None)
    }

    /// `TaskStatus`.
    pub fn status(&self, key: &TaskKey) -> Value {
        let mut status = json!({ "state": self.state.as_str() });
        if let Some(text) = &self.status_text {
            status["message"] = json!({
                "messageId": format!("{}-status-{}", key.message_id, self.last_seq),
                "contextId": key.session_id,
                "taskId": key.id(),
                "role": "ROLE_AGENT",
                "parts": [{"text": text}],
            });
        }
        status
    }

    /// `Task`.
    pub fn task(&self, key: &TaskKey) -> Value {
        let mut t = json!({
            "id": key.id(),
            "contextId": key.session_id,
            "status": self.status(key),
            "metadata": {"agentId": key.agent_id, "seq": self.last_seq},
        });
        if !self.text.is_empty() {
            t["artifacts"] = json!([answer(vec![self.text.join("\n")])]);
        }
        t
    }

    /// The `StreamResponse`s an update of the event at `seq` makes: an artifact update, or a
    /// status update (preceded, when a terminal CLI's screen became the answer, by that answer).
    pub fn stream_responses(&self, key: &TaskKey, update: Update, seq: i64) -> Vec<Value> {
        let meta = json!({ "seq": seq });
        match update {
            Update::Artifact(text) => vec![json!({"artifactUpdate": {
                "taskId": key.id(), "contextId": key.session_id, "artifact": answer(vec![text]),
                "append": true, "metadata": meta,
            }})],
            Update::Status => {
                let mut out = Vec::new();
                if self.state == TaskState::Completed && self.screen_answer {
                    out.push(json!({"artifactUpdate": {
                        "taskId": key.id(), "contextId": key.session_id,
                        "artifact": answer(self.text.clone()), "lastChunk": true, "metadata": meta,
                    }}));
                }
                out.push(json!({"statusUpdate": {
                    "taskId": key.id(), "contextId": key.session_id, "status": self.status(key), "metadata": meta,
                }}));
                out
            }
        }
    }
}

fn answer(text: Vec<String>) -> Value {
    json!({"artifactId": "answer", "name": "answer", "parts": [{"text": text.join("\n")}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_state_is_spelled_as_serde_spells_it() {
        use strum::IntoEnumIterator;
        let states: Vec<_> = TaskState::iter().collect();
        assert_eq!(states.len(), 6);
        for state in states {
            assert_eq!(serde_json::to_value(state).unwrap(), state.as_str(), "{state:?}");
        }
    }

    fn ev(seq: i64, t: &str, agent: Option<&str>, payload: Value) -> Event {
        Event {
            seq,
            event_id: format!("e{seq}"),
            event_type: t.into(),
            ts: seq,
            session_id: Some("s".into()),
            session_seq: None,
            agent_name: None,
            agent_id: agent.map(String::from),
            workspace: None,
            payload,
        }
    }

    #[test]
    fn a_task_works_waits_for_a_permission_and_completes_with_its_screen_as_the_answer() {
        let key = TaskKey {
            agent_id: "a".into(),
            session_id: "s".into(),
            message_id: "m".into(),
        };
        let mut f = TaskFold::default();
        assert_eq!(f.apply(&ev(1, SENT, None, json!({"messageId": "other"})), &key), None);
        assert_eq!(
            f.apply(
                &ev(
                    2,
                    SENT,
                    None,
                    json!({"messageId": "m", "turnId": "t", "agentIds": ["a"]})
                ),
                &key
            ),
            Some(Update::Status)
        );
        // Idle before it started is the idle it was in.
        assert_eq!(
            f.apply(&ev(3, "status.changed", Some("a"), json!({"status": "idle"})), &key),
            None
        );
        assert_eq!(
            f.apply(&ev(4, "delivery.accepted", Some("a"), json!({})), &key),
            Some(Update::Status)
        );
        assert_eq!(f.state, TaskState::Working);
        // An agent still starting up: active, then ready (idle) before it is given the message.
        f.apply(&ev(41, "status.changed", Some("a"), json!({"status": "active"})), &key);
        f.apply(&ev(42, "status.changed", Some("a"), json!({"status": "idle"})), &key);
        assert_eq!(f.state, TaskState::Working, "the start-up idle is not the task's end");
        let typed = ev(
            43,
            "transcript.chunk",
            Some("a"),
            json!({"chunk": {"role": "user", "content": "hi"}}),
        );
        f.apply(&typed, &key);
        // Another agent's events are not this task's.
        assert_eq!(
            f.apply(&ev(50, "status.changed", Some("b"), json!({"status": "idle"})), &key),
            None
        );
        f.apply(
            &ev(
                60,
                "permission.requested",
                Some("a"),
                json!({"requestId": "p", "tool": "bash"}),
            ),
            &key,
        );
        assert_eq!(f.state, TaskState::InputRequired);
        assert!(
            f.stops() && !f.ended(),
            "a fold of the history goes on past an interrupt"
        );
        // The harness's "blocked" after the request does not make it look busy again.
        let blocked = ev(61, "status.changed", Some("a"), json!({"status": "blocked"}));
        assert_eq!(f.apply(&blocked, &key), None);
        // Another message's delivery failing is not this task's failure.
        let other = ev(62, "delivery.failed", Some("a"), json!({"messageId": "other"}));
        assert_eq!(f.apply(&other, &key), None);
        assert_eq!(f.state, TaskState::InputRequired);
        f.apply(
            &ev(70, "permission.resolved", Some("a"), json!({"requestId": "p"})),
            &key,
        );
        f.apply(&ev(80, "terminal.screen", Some("a"), json!({"text": "done"})), &key);
        assert_eq!(
            f.apply(&ev(90, "status.changed", Some("a"), json!({"status": "idle"})), &key),
            Some(Update::Status)
        );
        assert_eq!(f.state, TaskState::Completed);
        let out = f.stream_responses(&key, Update::Status, 90);
        assert_eq!(out.len(), 2, "the screen answer, then the final status: {out:?}");
        assert_eq!(out[0]["artifactUpdate"]["artifact"]["parts"][0]["text"], "done");
        assert_eq!(f.task(&key)["status"]["state"], "TASK_STATE_COMPLETED");
        // Kept and read back between pages (automation's push).
        let kept: TaskFold = serde_json::from_value(serde_json::to_value(&f).unwrap()).unwrap();
        assert_eq!(kept, f);
    }

    #[test]
    fn the_next_message_to_the_agent_ends_the_task_it_superseded() {
        let key = TaskKey {
            agent_id: "a".into(),
            session_id: "s".into(),
            message_id: "m".into(),
        };
        let mut f = TaskFold::default();
        f.apply(&ev(1, SENT, None, json!({"messageId": "m", "agentIds": ["a"]})), &key);
        f.apply(&ev(2, SENT, None, json!({"messageId": "n", "agentIds": ["b"]})), &key);
        assert!(!f.superseded, "a message to another agent is not the next task");
        f.apply(&ev(3, SENT, None, json!({"messageId": "n2", "agentIds": ["a"]})), &key);
        assert!(f.superseded && f.ended());
        // The next task's events are not this one's.
        let next = ev(4, "delivery.accepted", Some("a"), json!({"messageId": "n2"}));
        assert_eq!(f.apply(&next, &key), None);
        assert_eq!(f.state, TaskState::Submitted);
    }
}
