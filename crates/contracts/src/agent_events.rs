//! The events an agent session writes to the log (seed 000's `AgentSessionEvent`, seed 003's
//! items, the relay's additions), typed: the harness and the SDK send these structs, never a
//! hand-written `json!`. A field every harness knows is written `null` when unset; one that
//! only some harnesses know (a structured protocol's run id, output, exit code, model, cache
//! counts) is left out when unknown — readers take absent and `null` alike.
//! Every type here is in the catalogue ([`crate::events::CATALOGUE`]): a test checks it.

use crate::session::EventPayload;
use serde::{Deserialize, Serialize};
use serde_json::Value;

macro_rules! agent_events {
    ($( $(#[$doc:meta])* $name:ident = $ty:literal { $($field:tt)* } )*) => {
        $(
            $(#[$doc])*
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
            #[serde(rename_all = "camelCase")]
            pub struct $name { $($field)* }
            impl EventPayload for $name {
                const TYPE: &'static str = $ty;
            }
        )*
        /// Every type declared here.
        pub const TYPES: &[&str] = &[$($ty),*];
    };
}

agent_events! {
    /// The agent session is attached (a new agent).
    SessionStarted = "session.started" { pub session_id: String }
    /// A restarted harness bound its agent again.
    SessionResumed = "session.resumed" { pub session_id: String }
    /// The session was released (seed 001), for this reason.
    SessionReleased = "session.released" { pub session_id: String, pub reason: Option<String> }
    /// The agent process exited (or the harness was stopped) with this code.
    SessionEnded = "session.ended" { pub session_id: String, pub exit_code: u32 }
    StatusChanged = "status.changed" { pub status: String, pub previous_status: Option<String> }
    /// The CLI waits on something the harness cannot answer; what its screen shows.
    StatusBlocked = "status.blocked" { pub reason: String, pub screen: String }
    /// A message was surfaced to the session.
    MessageReceived = "message.received" { pub message_id: String, pub delivery_id: String }
    Log = "log" { pub level: String, pub message: String }
    Error = "error" { pub error: String }
    /// Lines the CLI wrote (`combined` from a terminal, `stdout` from a structured protocol).
    TerminalOutput = "terminal.output" { pub stream: String, pub text: String }
    /// The screen at a ready prompt or a menu.
    TerminalScreen = "terminal.screen" { pub text: String }
    /// One relay message in the transcript.
    TranscriptChunk = "transcript.chunk" { pub chunk: Value }
    ItemStarted = "item.started" { pub item_id: String, pub kind: String, pub tool: String, pub input: Value }
    ItemCompleted = "item.completed" { pub item_id: String, pub tool: String, pub ok: bool }
    ToolCalled = "tool.called" {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run: Option<String>,
        pub tool: String,
        pub input: Value,
    }
    ToolCompleted = "tool.completed" {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run: Option<String>,
        pub tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub output: Option<String>,
        /// A person denied it: it did not run.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub denied: bool,
    }
    ToolFailed = "tool.failed" {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub run: Option<String>,
        pub tool: String,
        pub error: String,
    }
    CommandExecuted = "command.executed" {
        pub command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub exit_code: Option<i64>,
    }
    FileOperation = "file.operation" { pub path: String, pub operation: String }
    /// A file created, updated or deleted.
    FileChanged = "file.changed" { pub path: String, pub operation: String }
    TokensUsed = "tokens.used" {
        pub input_tokens: u64,
        pub output_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cache_read_tokens: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cache_write_tokens: Option<u64>,
        pub total_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub model: Option<String>,
    }
    PermissionRequested = "permission.requested" {
        pub request_id: String,
        pub tool: String,
        pub command: Option<String>,
        pub file_path: Option<String>,
        pub description: String,
    }
    /// The CLI ran a tool without asking while its screen says it does not ask: its tools are
    /// out of control, and the agent stays blocked.
    PermissionBypassed = "permission.bypassed" { pub ran: String, pub reason: String }
    QuestionRequested = "question.requested" { pub question_id: String, pub question: String, pub options: Vec<String> }
    TurnInterrupted = "turn.interrupted" { pub reason: Option<String> }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_event_an_agent_session_writes_is_in_the_catalogue() {
        let missing: Vec<&str> = super::TYPES
            .iter()
            .copied()
            .filter(|t| !crate::events::CATALOGUE.iter().any(|c| c.name == *t))
            .collect();
        assert!(missing.is_empty(), "not in events::CATALOGUE: {missing:?}");
    }
}
