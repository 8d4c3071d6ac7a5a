//! The event log (event ingestion service): append, query, replay, and the event catalogue.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// An event as a producer hands it over. The log assigns `seq`, `sessionSeq` and (if absent)
/// `ts`; `eventId` makes an append idempotent and is generated when absent.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewEvent {
    pub event_id: Option<String>,
    #[serde(rename = "type")]
    pub event_type: String,
    pub ts: Option<i64>,
    pub session_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_id: Option<String>,
    /// The workspace it belongs to: set by services for the session's workspace; a person's or
    /// an agent's events always go to their own (`default` when no one says).
    pub workspace: Option<String>,
    #[serde(default = "empty_object")]
    pub payload: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// `event.append`: one event, or `{"events": [...]}`. All or nothing: an invalid event rejects
/// the request and nothing is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged, try_from = "Value")]
pub enum AppendRequest {
    Batch { events: Vec<NewEvent> },
    One(NewEvent),
}

/// Chooses the form by the `events` key, so a decode error names the field that is wrong
/// rather than "did not match any variant".
impl TryFrom<Value> for AppendRequest {
    type Error = serde_json::Error;

    fn try_from(v: Value) -> Result<Self, Self::Error> {
        #[derive(Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        struct Batch {
            events: Vec<NewEvent>,
        }
        if v.get("events").is_some() {
            return Ok(AppendRequest::Batch {
                events: serde_json::from_value::<Batch>(v)?.events,
            });
        }
        Ok(AppendRequest::One(serde_json::from_value(v)?))
    }
}

impl AppendRequest {
    pub fn into_events(self) -> Vec<NewEvent> {
        match self {
            AppendRequest::Batch { events } => events,
            AppendRequest::One(e) => vec![e],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Appended {
    pub event_id: String,
    pub seq: i64,
    /// The id was already in the log; `seq` is the stored event's.
    pub duplicate: bool,
}

/// Sent only after the events are committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppendResponse {
    pub appended: Vec<Appended>,
}

/// An event in the log: the envelope (seed 003's `_seq/_ts/_sessionId/_agentName`) and payload.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Global, dense, monotonic; commit order equals seq order.
    pub seq: i64,
    pub event_id: String,
    #[serde(rename = "type")]
    pub event_type: String,
    pub ts: i64,
    pub session_id: Option<String>,
    /// 1, 2, 3, … within the session.
    pub session_seq: Option<i64>,
    pub agent_name: Option<String>,
    pub agent_id: Option<String>,
    /// Relay extension: the workspace it belongs to.
    pub workspace: Option<String>,
    pub payload: Value,
}

/// `event.query`: a page of events matching the filters, oldest first, after `cursor`.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueryRequest {
    /// Every list filter: absent or empty is no filter.
    pub types: Option<Vec<String>>,
    /// Matches agentName or agentId.
    pub agents: Option<Vec<String>>,
    pub session_ids: Option<Vec<String>>,
    /// Unix ms, inclusive.
    pub since: Option<i64>,
    /// Unix ms, exclusive.
    pub until: Option<i64>,
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<i64>,
    /// Newest first (an agent's recent output): `cursor` then means "older than".
    pub newest_first: Option<bool>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct QueryResponse {
    pub events: Vec<Event>,
    /// Present when there may be more: pass it as `cursor`.
    pub next_cursor: Option<i64>,
}

/// `event.since`: events with seq greater than `seq` (0 = from the start), for replay.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SinceRequest {
    pub seq: i64,
    /// Every list filter: absent or empty is no filter.
    pub types: Option<Vec<String>>,
    pub agents: Option<Vec<String>>,
    pub session_ids: Option<Vec<String>>,
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SinceResponse {
    pub events: Vec<Event>,
    /// Ask again from here; equals `seq` when nothing matched so far.
    pub next_seq: i64,
    /// The highest committed seq when the page was read.
    pub head_seq: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PurgeSessionRequest {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PurgeSessionResponse {
    pub events_deleted: i64,
}

/// JSON kinds a required payload field may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Num,
    Bool,
    Obj,
    Arr,
    /// Any JSON value, but present.
    Any,
}

impl Kind {
    pub fn matches(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Num => v.is_number(),
            Kind::Bool => v.is_boolean(),
            Kind::Obj => v.is_object(),
            Kind::Arr => v.is_array(),
            Kind::Any => !v.is_null(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Str => "string",
            Kind::Num => "number",
            Kind::Bool => "boolean",
            Kind::Obj => "object",
            Kind::Arr => "array",
            Kind::Any => "any value",
        }
    }
}

/// One entry of the event catalogue: a known type, where it comes from, what its payload needs.
#[derive(Debug, Clone, Copy)]
pub struct EventType {
    pub name: &'static str,
    pub source: &'static str,
    pub required: &'static [(&'static str, Kind)],
}

const fn t(name: &'static str, source: &'static str, required: &'static [(&'static str, Kind)]) -> EventType {
    EventType { name, source, required }
}

use Kind::*;

const S000: &str = "seed 000";
const S001: &str = "seed 001";
const S002: &str = "seed 002";
const S003: &str = "seed 003";
/// Relay's own additions (issue 5).
const RELAY: &str = "relay-mesh";

/// Every typed event. Types not listed are kept as generic events with their payload.
pub const CATALOGUE: &[EventType] = &[
    // Seed 000: AgentSessionEvent union.
    t("status.changed", S000, &[("status", Str)]),
    t("status.idle", S000, &[]),
    t("status.active", S000, &[]),
    t("status.blocked", S000, &[]),
    t("status.waiting", S000, &[]),
    t("status.offline", S000, &[]),
    t("tool.called", S000, &[("tool", Str)]),
    t("tool.completed", S000, &[("tool", Str)]),
    t("tool.failed", S000, &[("tool", Str), ("error", Str)]),
    t("tool.output", S000, &[("tool", Str), ("output", Str)]),
    t("message.received", S000, &[("messageId", Str)]),
    t("message.sent", S000, &[("messageId", Str)]),
    t("delivery.accepted", S000, &[("deliveryId", Str), ("messageId", Str)]),
    t("delivery.delivered", S000, &[("deliveryId", Str), ("messageId", Str)]),
    t(
        "delivery.deferred",
        S000,
        &[("deliveryId", Str), ("messageId", Str), ("availableAt", Any)],
    ),
    t(
        "delivery.failed",
        S000,
        &[("deliveryId", Str), ("messageId", Str), ("reason", Str)],
    ),
    t("action.invoked", S000, &[("action", Str), ("invocationId", Str)]),
    t("action.completed", S000, &[("action", Str), ("invocationId", Str)]),
    t(
        "action.failed",
        S000,
        &[("action", Str), ("invocationId", Str), ("error", Str)],
    ),
    t(
        "action.denied",
        S000,
        &[("action", Str), ("invocationId", Str), ("reason", Str)],
    ),
    t("transcript.chunk", S000, &[("chunk", Obj)]),
    t("file.changed", S000, &[("path", Str), ("operation", Str)]),
    t("command.started", S000, &[("command", Str)]),
    t("command.completed", S000, &[("command", Str)]),
    t("command.failed", S000, &[("command", Str), ("error", Str)]),
    t("terminal.output", S000, &[("text", Str)]),
    t("terminal.screen", S000, &[("text", Str)]),
    t("usage.updated", S000, &[]),
    t("session.started", S000, &[("sessionId", Str)]),
    t("session.released", S000, &[("sessionId", Str)]),
    t("session.resumed", S000, &[("sessionId", Str)]),
    t("session.forked", S000, &[("sessionId", Str), ("parentSessionId", Str)]),
    t("log", S000, &[("level", Str), ("message", Str)]),
    t("error", S000, &[("error", Str)]),
    // Seed 003 section 1: ARES v1 (those not already above).
    t("session.ended", S003, &[]),
    t("item.started", S003, &[("itemId", Str)]),
    t("item.delta", S003, &[("itemId", Str), ("delta", Any)]),
    t("item.completed", S003, &[("itemId", Str)]),
    t("permission.requested", S003, &[("requestId", Str), ("tool", Str)]),
    t("permission.resolved", S003, &[("requestId", Str), ("decision", Str)]),
    t("question.requested", S003, &[("questionId", Str), ("question", Str)]),
    t("question.resolved", S003, &[("questionId", Str), ("answer", Str)]),
    t("message.exchanged", S003, &[("from", Str), ("to", Str), ("body", Str)]),
    t("agent.spawned", S003, &[]),
    t("agent.released", S003, &[]),
    t("consensus.proposed", S003, &[("proposalId", Str)]),
    t("consensus.resolved", S003, &[("proposalId", Str)]),
    // Each vote on a proposal, before it resolves.
    t(
        "consensus.voted",
        RELAY,
        &[("proposalId", Str), ("voter", Str), ("choice", Str)],
    ),
    t("tokens.used", S003, &[("inputTokens", Num), ("outputTokens", Num)]),
    t("file.operation", S003, &[("path", Str), ("operation", Str)]),
    t("command.executed", S003, &[("command", Str)]),
    t(
        "budget.exceeded",
        RELAY,
        &[("budget", Str), ("scope", Str), ("limitUsd", Num), ("spentUsd", Num)],
    ),
    // A harness sent its CLI's interrupt (session.turn.cancel, agent.interrupt, a busy send).
    t("turn.interrupted", RELAY, &[]),
    // A terminal harness saw its CLI run a tool without asking, in a mode that does not ask.
    t("permission.bypassed", RELAY, &[("ran", Str), ("reason", Str)]),
    // Seed 001: the delivery runner stored a delivery of a message to an agent; cancelled
    // before it reached the agent (delivery.cancel, a flush, an onBusy rollback, its agent gone).
    t(
        "delivery.created",
        S001,
        &[("deliveryId", Str), ("messageId", Str), ("agentId", Str)],
    ),
    t(
        "delivery.cancelled",
        RELAY,
        &[("deliveryId", Str), ("messageId", Str), ("agentId", Str)],
    ),
    // The audit trail: who did what to what (decisions, keys, workspaces, agent stops).
    t(
        "audit.recorded",
        RELAY,
        &[("action", Str), ("actor", Str), ("target", Str)],
    ),
    // Seed 002: the session registry's events.
    t("session.created", S002, &[("sessionId", Str), ("createdAt", Num)]),
    t("session.closed", S002, &[("sessionId", Str)]),
    t("session.archived", S002, &[("sessionId", Str)]),
    t("session.purged", S002, &[("sessionId", Str)]),
    t(
        "session.updated",
        S002,
        &[("sessionId", Str), ("changedProperties", Arr)],
    ),
    t(
        "session.merged",
        S002,
        &[("childSessionId", Str), ("parentSessionId", Str), ("handoff", Str)],
    ),
    t("session.abandoned", S002, &[("sessionId", Str)]),
    t(
        "session.forking",
        S002,
        &[("childSessionId", Str), ("parentSessionId", Str), ("reason", Str)],
    ),
    t(
        "session.branch.created",
        S002,
        &[
            ("sessionId", Str),
            ("childSessionId", Str),
            ("parentSessionId", Str),
            ("kind", Str),
        ],
    ),
    t(
        "session.merging",
        S002,
        &[("childSessionId", Str), ("parentSessionId", Str)],
    ),
    t(
        "session.branch.merged",
        S002,
        &[("sessionId", Str), ("childSessionId", Str), ("parentSessionId", Str)],
    ),
    t(
        "session.childCompleted",
        S002,
        &[("childSessionId", Str), ("parentSessionId", Str), ("result", Any)],
    ),
    t("session.compressed", S002, &[("sessionId", Str)]),
    t("session.squash", S002, &[("sessionId", Str), ("summaryJson", Str)]),
    t(
        "session.compressionRequested",
        S002,
        &[("sessionId", Str), ("reason", Str)],
    ),
    t(
        "session.clientAccount.changed",
        S002,
        &[("sessionId", Str), ("clientId", Str), ("clientAccountId", Str)],
    ),
    t(
        "session.connectorSwap.editRequested",
        S002,
        &[("sessionId", Str), ("agentId", Str)],
    ),
    t(
        "session.agent.added",
        S002,
        &[("sessionId", Str), ("agentId", Str), ("adapterName", Str)],
    ),
    t("session.agent.removed", S002, &[("sessionId", Str), ("agentId", Str)]),
    // A relay message queued for an agent of the session (the harness logs `message.received`
    // once it has it).
    t(
        "session.message.received",
        RELAY,
        &[
            ("sessionId", Str),
            ("messageId", Str),
            ("deliveryId", Str),
            ("agentId", Str),
            ("reason", Str),
        ],
    ),
    t(
        "session.agent.offline",
        RELAY,
        &[("sessionId", Str), ("agentId", Str), ("hostId", Str), ("reason", Str)],
    ),
    t(
        "session.agent.online",
        RELAY,
        &[("sessionId", Str), ("agentId", Str), ("hostId", Str)],
    ),
    t(
        "session.turn.started",
        S002,
        &[("sessionId", Str), ("turnId", Str), ("turnNumber", Num)],
    ),
    t(
        "session.turn.completed",
        S002,
        &[("sessionId", Str), ("turnId", Str), ("success", Bool)],
    ),
    t(
        "session.user_message.sent",
        S002,
        &[("sessionId", Str), ("messageId", Str), ("turnId", Str)],
    ),
    t(
        "session.user_message.acknowledged",
        S002,
        &[("sessionId", Str), ("messageId", Str), ("agentId", Str)],
    ),
    t(
        "session.user_message.completed",
        S002,
        &[("sessionId", Str), ("messageId", Str), ("outcome", Str)],
    ),
    // The automation service: schedules and webhooks.
    t(
        "schedule.fired",
        RELAY,
        &[("scheduleId", Str), ("dueAt", Num), ("ok", Bool)],
    ),
    t("webhook.disabled", RELAY, &[("webhookId", Str), ("reason", Str)]),
];

/// Event types only the mesh's own services write, each about what it did itself: the audit
/// trail, budgets, decisions, delivery receipts, automation, and the registry's seed 002
/// session lifecycle. A person's key or an agent appending one is refused: a forged
/// `audit.recorded` or `permission.resolved` would read as the real thing.
pub fn written_by_services_only(event_type: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "audit.",
        "budget.",
        "delivery.",
        "schedule.",
        "webhook.",
        "key.",
        "workspace.",
        "consensus.",
    ];
    const TYPES: &[&str] = &[
        "permission.resolved",
        "question.resolved",
        "message.exchanged",
        "session.message.received",
    ];
    PREFIXES.iter().any(|p| event_type.starts_with(p))
        || TYPES.contains(&event_type)
        || lookup(event_type).is_some_and(|t| t.source == S002)
}

pub fn lookup(event_type: &str) -> Option<&'static EventType> {
    CATALOGUE.iter().find(|e| e.name == event_type)
}

/// Checks an event against the catalogue: `Ok(true)` typed, `Ok(false)` unknown type (kept as a
/// generic event), `Err` with the reason when a known type lacks a field or has the wrong kind.
pub fn validate(event: &NewEvent) -> Result<bool, String> {
    if event.event_type.trim().is_empty() || event.event_type.len() > 128 {
        return Err("type must be a non-empty string of at most 128 characters".into());
    }
    if event
        .event_type
        .split('.')
        .any(|part| part.is_empty() || part.contains(['*', '>', ' ']))
    {
        return Err(format!("type `{}` is not a valid dotted name", event.event_type));
    }
    let Some(payload) = event.payload.as_object() else {
        return Err("payload must be a JSON object".into());
    };
    for (name, value) in [
        ("sessionId", &event.session_id),
        ("agentName", &event.agent_name),
        ("agentId", &event.agent_id),
    ] {
        if value.as_ref().is_some_and(|v| v.is_empty() || v.len() > 256) {
            return Err(format!("{name} must be 1 to 256 characters"));
        }
    }
    let fields = [&event.event_id, &event.session_id, &event.agent_name, &event.agent_id];
    if event.event_type.contains('\0')
        || fields.iter().any(|f| f.as_ref().is_some_and(|v| v.contains('\0')))
        || has_nul(&event.payload)
    {
        return Err("strings must not contain the NUL character (\\u0000)".into());
    }
    let Some(known) = lookup(&event.event_type) else {
        return Ok(false);
    };
    for (field, kind) in known.required {
        match payload.get(*field) {
            None | Some(Value::Null) => return Err(format!("{} needs payload.{field}", known.name)),
            Some(v) if !kind.matches(v) => {
                return Err(format!("{}: payload.{field} must be a {}", known.name, kind.name()));
            }
            Some(_) => {}
        }
    }
    Ok(true)
}

/// The catalogue as the Markdown table docs/reference/subjects.md carries (a test keeps the two identical).
pub fn catalogue_markdown() -> String {
    let mut out = String::from("| type | live subject | from | required payload fields |\n| --- | --- | --- | --- |\n");
    for e in CATALOGUE {
        let fields: Vec<String> = e
            .required
            .iter()
            .map(|(f, k)| format!("`{f}` ({})", k.name()))
            .collect();
        let fields = if fields.is_empty() {
            "–".to_string()
        } else {
            fields.join(", ")
        };
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            e.name,
            crate::subjects::event::committed_subject(e.name),
            e.source,
            fields
        ));
    }
    out
}

fn has_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(t: &str, payload: Value) -> NewEvent {
        serde_json::from_value(json!({"type": t, "payload": payload})).unwrap()
    }

    #[test]
    fn catalogue_names_are_unique_and_cover_every_seed_000_event_type() {
        let names: std::collections::HashSet<_> = CATALOGUE.iter().map(|e| e.name).collect();
        assert_eq!(names.len(), CATALOGUE.len());
        let seed000: Vec<crate::capabilities::AgentSessionEventType> = serde_json::from_value(json!([
            "status.changed",
            "status.idle",
            "status.active",
            "status.blocked",
            "status.waiting",
            "status.offline",
            "tool.called",
            "tool.completed",
            "tool.failed",
            "tool.output",
            "message.received",
            "message.sent",
            "delivery.accepted",
            "delivery.delivered",
            "delivery.deferred",
            "delivery.failed",
            "action.invoked",
            "action.completed",
            "action.failed",
            "action.denied",
            "transcript.chunk",
            "file.changed",
            "command.started",
            "command.completed",
            "command.failed",
            "terminal.output",
            "terminal.screen",
            "usage.updated",
            "session.started",
            "session.released",
            "session.resumed",
            "session.forked",
            "log",
            "error"
        ]))
        .unwrap();
        for t in seed000 {
            let name = serde_json::to_value(t).unwrap();
            assert!(
                names.contains(name.as_str().unwrap()),
                "{name} missing from the catalogue"
            );
        }
    }

    #[test]
    fn known_types_need_their_fields_unknown_types_pass_as_generic() {
        assert_eq!(validate(&ev("tool.called", json!({"tool": "bash"}))), Ok(true));
        assert!(
            validate(&ev("tool.called", json!({})))
                .unwrap_err()
                .contains("payload.tool")
        );
        assert!(
            validate(&ev("tool.called", json!({"tool": 3})))
                .unwrap_err()
                .contains("string")
        );
        assert_eq!(validate(&ev("vendor.custom", json!({"anything": 1}))), Ok(false));
        assert!(validate(&ev("a..b", json!({}))).is_err());
        assert!(validate(&ev("x", json!([1]))).is_err());
        assert!(
            validate(&ev("log", json!({"level": "info", "message": "a\0b"})))
                .unwrap_err()
                .contains("NUL")
        );
        assert!(validate(&ev("x", json!({"deep": [{"k\0": 1}]}))).is_err());
    }

    #[test]
    fn append_request_errors_name_the_bad_field() {
        let e = serde_json::from_value::<AppendRequest>(json!({"events": [{"payload": {}}]})).unwrap_err();
        assert!(e.to_string().contains("missing field `type`"), "{e}");
        let e = serde_json::from_value::<AppendRequest>(json!({"type": 5})).unwrap_err();
        assert!(e.to_string().contains("invalid type"), "{e}");
        assert!(matches!(
            serde_json::from_value::<AppendRequest>(json!({"type": "log"})).unwrap(),
            AppendRequest::One(_)
        ));
    }
}
