//! Agent session capabilities (seed 000) and AG-UI capability discovery (seed 004).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// When a message should be surfaced to the session (seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum DeliveryMode {
    Immediate,
    NextMessage,
    NextToolCall,
    OnIdle,
    Manual,
}

impl DeliveryMode {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What an agent lacks to take a message: the capability (`delivery.modes: manual`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub capability: String,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum AttachmentKind {
    Text,
    Image,
}

impl AttachmentKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Every event type an agent session may declare in `events.emits` (seed 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AgentSessionEventType {
    #[serde(rename = "status.changed")]
    StatusChanged,
    #[serde(rename = "status.idle")]
    StatusIdle,
    #[serde(rename = "status.active")]
    StatusActive,
    #[serde(rename = "status.blocked")]
    StatusBlocked,
    #[serde(rename = "status.waiting")]
    StatusWaiting,
    #[serde(rename = "status.offline")]
    StatusOffline,
    #[serde(rename = "tool.called")]
    ToolCalled,
    #[serde(rename = "tool.completed")]
    ToolCompleted,
    #[serde(rename = "tool.failed")]
    ToolFailed,
    #[serde(rename = "tool.output")]
    ToolOutput,
    #[serde(rename = "message.received")]
    MessageReceived,
    #[serde(rename = "message.sent")]
    MessageSent,
    #[serde(rename = "delivery.accepted")]
    DeliveryAccepted,
    #[serde(rename = "delivery.delivered")]
    DeliveryDelivered,
    #[serde(rename = "delivery.deferred")]
    DeliveryDeferred,
    #[serde(rename = "delivery.failed")]
    DeliveryFailed,
    #[serde(rename = "action.invoked")]
    ActionInvoked,
    #[serde(rename = "action.completed")]
    ActionCompleted,
    #[serde(rename = "action.failed")]
    ActionFailed,
    #[serde(rename = "action.denied")]
    ActionDenied,
    #[serde(rename = "transcript.chunk")]
    TranscriptChunk,
    #[serde(rename = "file.changed")]
    FileChanged,
    #[serde(rename = "command.started")]
    CommandStarted,
    #[serde(rename = "command.completed")]
    CommandCompleted,
    #[serde(rename = "command.failed")]
    CommandFailed,
    #[serde(rename = "terminal.output")]
    TerminalOutput,
    #[serde(rename = "terminal.screen")]
    TerminalScreen,
    #[serde(rename = "usage.updated")]
    UsageUpdated,
    #[serde(rename = "session.started")]
    SessionStarted,
    #[serde(rename = "session.released")]
    SessionReleased,
    #[serde(rename = "session.resumed")]
    SessionResumed,
    #[serde(rename = "session.forked")]
    SessionForked,
    #[serde(rename = "log")]
    Log,
    #[serde(rename = "error")]
    Error,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessagingCapabilities {
    pub receive: bool,
    pub send: Option<bool>,
    pub attachments: Option<Vec<AttachmentKind>>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DeliveryCapabilities {
    pub modes: Vec<DeliveryMode>,
    pub queue: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventCapabilities {
    pub emits: Vec<AgentSessionEventType>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActionCapabilities {
    pub invoke: Option<bool>,
    pub expose: Option<bool>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LifecycleCapabilities {
    /// Required: true only when the session really implements `release()`.
    pub release: bool,
    pub pause: Option<bool>,
    pub resume: Option<bool>,
    pub fork: Option<bool>,
    pub snapshot: Option<bool>,
}

/// What one attached agent session can receive, emit, invoke, expose and release (seed 000).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentSessionCapabilities {
    pub messaging: MessagingCapabilities,
    pub delivery: DeliveryCapabilities,
    pub events: EventCapabilities,
    pub actions: Option<ActionCapabilities>,
    pub lifecycle: LifecycleCapabilities,
}

/// A lifecycle operation an agent may or may not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumIter)]
pub enum LifecycleOp {
    #[strum(serialize = "lifecycle.release")]
    Release,
    #[strum(serialize = "lifecycle.pause")]
    Pause,
    #[strum(serialize = "lifecycle.resume")]
    Resume,
    #[strum(serialize = "lifecycle.fork")]
    Fork,
    #[strum(serialize = "lifecycle.snapshot")]
    Snapshot,
}

impl LifecycleOp {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl AgentSessionCapabilities {
    /// The seed's minimum: receives text immediately, reports status, cannot be released.
    pub fn minimum() -> Self {
        AgentSessionCapabilities {
            messaging: MessagingCapabilities {
                receive: true,
                send: None,
                attachments: None,
            },
            delivery: DeliveryCapabilities {
                modes: vec![DeliveryMode::Immediate],
                queue: None,
            },
            events: EventCapabilities {
                emits: vec![AgentSessionEventType::StatusChanged],
            },
            actions: None,
            lifecycle: LifecycleCapabilities {
                release: false,
                pause: None,
                resume: None,
                fork: None,
                snapshot: None,
            },
        }
    }

    /// Rules serde cannot express. Returns every violation, not just the first.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        if !self.messaging.receive {
            problems.push("messaging.receive must be true: every agent session receives messages".into());
        }
        if self.delivery.modes.is_empty() {
            problems.push("delivery.modes must name at least one delivery mode".into());
        }
        if has_duplicates(&self.delivery.modes) {
            problems.push("delivery.modes lists a mode twice".into());
        }
        if has_duplicates(&self.events.emits) {
            problems.push("events.emits lists an event type twice".into());
        }
        if let Some(att) = &self.messaging.attachments
            && has_duplicates(att)
        {
            problems.push("messaging.attachments lists a kind twice".into());
        }
        if problems.is_empty() { Ok(()) } else { Err(problems) }
    }

    pub fn supports_mode(&self, mode: DeliveryMode) -> bool {
        self.delivery.modes.contains(&mode)
    }

    /// Text is always receivable; other kinds only when declared.
    pub fn accepts_attachment(&self, kind: AttachmentKind) -> bool {
        kind == AttachmentKind::Text || self.messaging.attachments.as_ref().is_some_and(|a| a.contains(&kind))
    }

    /// Why an agent with these capabilities cannot take a message whose parts (content blocks
    /// or attachments, by their `type`) are `parts`, delivered in `mode`, if it cannot. The one
    /// rule the send path, relay messages and the delivery runner (again at delivery, in case
    /// the agent re-declared) apply.
    pub fn refusal(&self, parts: &[Value], mode: Option<DeliveryMode>) -> Option<Refusal> {
        let refuse = |capability: String, reason: &str| {
            Some(Refusal {
                capability,
                reason: reason.into(),
            })
        };
        if !self.messaging.receive {
            return refuse("messaging.receive".into(), "the agent does not receive messages");
        }
        let mut kinds = parts.iter().map(|p| match p.get("type").and_then(Value::as_str) {
            Some("image") => AttachmentKind::Image,
            _ => AttachmentKind::Text,
        });
        if let Some(kind) = kinds.find(|k| !self.accepts_attachment(*k)) {
            let kind = kind.as_str();
            return refuse(
                format!("messaging.attachments: {kind}"),
                &format!("the message carries {kind} content"),
            );
        }
        match mode {
            Some(mode) if !self.supports_mode(mode) => refuse(
                format!("delivery.modes: {}", mode.as_str()),
                "the requested delivery mode was not declared",
            ),
            _ => None,
        }
    }

    pub fn supports(&self, op: LifecycleOp) -> bool {
        let l = &self.lifecycle;
        match op {
            LifecycleOp::Release => l.release,
            LifecycleOp::Pause => l.pause == Some(true),
            LifecycleOp::Resume => l.resume == Some(true),
            LifecycleOp::Fork => l.fork == Some(true),
            LifecycleOp::Snapshot => l.snapshot == Some(true),
        }
    }
}

fn has_duplicates<T: PartialEq>(items: &[T]) -> bool {
    items.iter().enumerate().any(|(i, a)| items[..i].contains(a))
}

/// AG-UI `AgentCapabilities` (seed 004): discovery only, absent means unknown. Known categories
/// must be objects; their contents are the agent's to describe and are kept as declared.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgUiCapabilities {
    pub identity: Option<serde_json::Map<String, Value>>,
    pub transport: Option<serde_json::Map<String, Value>>,
    pub tools: Option<serde_json::Map<String, Value>>,
    pub output: Option<serde_json::Map<String, Value>>,
    pub state: Option<serde_json::Map<String, Value>>,
    pub multi_agent: Option<serde_json::Map<String, Value>>,
    pub reasoning: Option<serde_json::Map<String, Value>>,
    pub multimodal: Option<serde_json::Map<String, Value>>,
    pub execution: Option<serde_json::Map<String, Value>>,
    pub human_in_the_loop: Option<serde_json::Map<String, Value>>,
    pub custom: Option<serde_json::Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_capability_from_the_seed_parses_and_validates() {
        let caps: AgentSessionCapabilities = serde_json::from_value(serde_json::json!({
            "messaging": { "receive": true },
            "delivery": { "modes": ["immediate"] },
            "events": { "emits": ["status.changed"] },
            "lifecycle": { "release": false }
        }))
        .unwrap();
        assert_eq!(caps, AgentSessionCapabilities::minimum());
        assert!(caps.validate().is_ok());
    }

    #[test]
    fn missing_release_flag_is_rejected_by_name() {
        let err = serde_json::from_value::<AgentSessionCapabilities>(serde_json::json!({
            "messaging": { "receive": true },
            "delivery": { "modes": ["immediate"] },
            "events": { "emits": [] },
            "lifecycle": {}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("release"), "{err}");
    }

    #[test]
    fn unknown_delivery_mode_and_event_type_are_rejected() {
        for bad in [
            serde_json::json!({"messaging":{"receive":true},"delivery":{"modes":["interrupt"]},"events":{"emits":[]},"lifecycle":{"release":false}}),
            serde_json::json!({"messaging":{"receive":true},"delivery":{"modes":["immediate"]},"events":{"emits":["tool.exploded"]},"lifecycle":{"release":false}}),
        ] {
            assert!(serde_json::from_value::<AgentSessionCapabilities>(bad).is_err());
        }
    }

    #[test]
    fn receive_false_and_empty_modes_fail_validation_with_every_reason() {
        let mut caps = AgentSessionCapabilities::minimum();
        caps.messaging.receive = false;
        caps.delivery.modes.clear();
        let problems = caps.validate().unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
    }
}
