//! Relay messaging: agents and people talk through the mesh (seed 000 `messaging`, seed 001
//! `MessageContext.reason`, seed 003 `message.exchanged`). A message goes to `@handle` (a DM),
//! several handles (a group DM), `#channel`, or a thread (the id of the message it replies to);
//! each recipient gets one durable delivery in its own session, which the delivery runner
//! carries like any other. The sender is always the authenticated caller, never a field.

use crate::capabilities::DeliveryMode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;

/// The longest message text, in characters.
pub const MAX_TEXT_CHARS: usize = 32_000;
/// The longest channel name, in characters (without the `#`).
pub const MAX_CHANNEL_CHARS: usize = 40;
/// The channel every workspace has; every live agent of the workspace is a member.
pub const GENERAL: &str = "general";

/// The channel `name` stands for, if it is one: 1 to [`MAX_CHANNEL_CHARS`] lowercase letters,
/// digits, `-` or `_`, starting with a letter or digit, with or without a leading `#`.
pub fn channel_of(name: &str) -> Option<String> {
    let c = name.strip_prefix('#').unwrap_or(name).to_ascii_lowercase();
    let valid = (1..=MAX_CHANNEL_CHARS).contains(&c.len())
        && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
        && c.chars().next().is_some_and(|ch| ch.is_ascii_alphanumeric());
    valid.then_some(c)
}

/// Where a message goes: `"@bob"`, `"#ops"`, or `["@bob", "@carol"]` (a group DM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum To {
    One(String),
    Many(Vec<String>),
}

/// How urgent a message is; the harness surfaces `urgent` and `high` ones first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Priority {
    Low,
    Normal,
    High,
    Urgent,
}

impl Priority {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The rank an agent's queue is ordered by (higher goes first).
    pub fn rank(self) -> i16 {
        match self {
            Priority::Low => 0,
            Priority::Normal => 1,
            Priority::High => 2,
            Priority::Urgent => 3,
        }
    }
}

/// `message.send`. No `from`: the sender is whoever the mesh authenticated.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendRequest {
    /// `@handle`, `#channel`, or a list of handles; leave out to reply in `threadId`'s conversation.
    pub to: Option<To>,
    /// Reply in the thread of this message (its root when it is itself a reply).
    pub thread_id: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 32000, pattern = r"^[^\x00]*[^\s\x00][^\x00]*$")
    )]
    pub text: String,
    /// Beside the text: `{"type": "text", "text", "name"?}` or `{"type": "image", "mediaType":
    /// "image/png", "data": <base64>, "name"?}`; each recipient must declare the kind in
    /// `messaging.attachments`.
    #[cfg_attr(feature = "openapi", schema(max_items = 16))]
    pub attachments: Option<Vec<Value>>,
    /// How each recipient's delivery goes (its default when absent).
    pub delivery_mode: Option<DeliveryMode>,
    pub priority: Option<Priority>,
    /// When the message stops mattering (RFC 3339, e.g. `2026-11-24T18:00:00Z`); passed to the
    /// recipient in its delivery context.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 64,
            pattern = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
        )
    )]
    pub deadline: Option<String>,
    /// A retried send with the same key (per sender) answers what the first one stored.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"^[^\x00]+$")
    )]
    pub idempotency_key: Option<String>,
}

/// Who sent a message, as the mesh authenticated it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Sender {
    /// `agent`, `key` (a person's API key) or `service`.
    pub kind: String,
    /// The agent id, key id or service name.
    pub id: String,
    /// An agent's handle when it sent.
    pub handle: Option<String>,
}

impl Sender {
    /// `@handle` for an agent, `key:<id>` or `service:<name>` otherwise.
    pub fn display(&self) -> String {
        match (&self.handle, self.kind.as_str()) {
            (Some(h), _) => format!("@{h}"),
            (None, kind) => format!("{kind}:{}", self.id),
        }
    }
}

/// What became of one recipient.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Recipient {
    pub handle: String,
    pub agent_id: String,
    /// `dm`, `message`, `mention`, `thread-reply` or `notification` (seed 001).
    pub reason: String,
    /// `queued` (its delivery is stored; receipts follow on `delivery.*`) or `failed`.
    pub status: String,
    pub delivery_id: Option<String>,
    /// Why it failed (a capability it lacks, a guard).
    pub error: Option<String>,
}

/// A stored relay message.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RelayMessage {
    pub message_id: String,
    /// `#channel` or the participants of a DM (`@alice,@bob`).
    pub conversation: String,
    /// `dm`, `group` or `channel`.
    pub kind: String,
    pub channel: Option<String>,
    /// The root of the thread this message replies in.
    pub thread_id: Option<String>,
    pub from: Sender,
    pub text: String,
    pub attachments: Option<Vec<Value>>,
    /// Replies between agents since a person last spoke in the thread (the loop guard's count).
    pub hop: i64,
    pub priority: Option<Priority>,
    pub deadline: Option<String>,
    pub created_at: i64,
    /// The log-wide order of messages: pages of history and search go by it.
    pub seq: i64,
    pub recipients: Vec<Recipient>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SendResponse {
    pub message_id: String,
    pub conversation: String,
    pub thread_id: Option<String>,
    /// One entry per recipient; a `failed` one says why.
    pub recipients: Vec<Recipient>,
    /// True when an earlier send with the same idempotency key answered this.
    pub duplicate: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageRef {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"^[^\x00]+$")
    )]
    pub message_id: String,
}

/// `message.thread`: the root and its replies, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ThreadResponse {
    pub root: RelayMessage,
    pub replies: Vec<RelayMessage>,
}

/// `message.search`: Postgres full-text search over the workspace's messages, newest first.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema, utoipa::IntoParams), into_params(parameter_in = Query))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchMessagesRequest {
    /// Words to find (web-search syntax: `"a phrase"`, `-word`, `or`).
    #[cfg_attr(
        feature = "openapi",
        param(min_length = 1, max_length = 500, pattern = r"^[^\x00]*[^\s\x00][^\x00]*$"),
        schema(min_length = 1, max_length = 500, pattern = r"^[^\x00]*[^\s\x00][^\x00]*$")
    )]
    pub q: String,
    /// Only this channel's messages.
    #[cfg_attr(
        feature = "openapi",
        param(max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$"),
        schema(max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    )]
    pub channel: Option<String>,
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 200),
        schema(minimum = 1, maximum = 200)
    )]
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    pub messages: Vec<RelayMessage>,
    /// Ask again with `after` set to this for the next page; absent at the end.
    pub next_cursor: Option<i64>,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    pub name: String,
    pub topic: Option<String>,
    /// Who made it (`key:<id>`, `@handle`, `service:<name>`; `relay` for #general).
    pub created_by: String,
    pub created_at: i64,
    /// Live agents that are members (for #general: every live agent of the workspace).
    pub members: i64,
}

#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateChannelRequest {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    )]
    pub name: String,
    #[cfg_attr(feature = "openapi", schema(max_length = 500, pattern = r"^[^\x00]*$"))]
    pub topic: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListChannelsRequest {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ChannelList {
    pub channels: Vec<Channel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelRef {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    )]
    pub channel: String,
}

/// `channel.join` / `channel.leave`: an agent joins for itself; a person or service names the
/// agent (handle or id).
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MembershipRequest {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    )]
    pub channel: String,
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 256, pattern = r"^[^\x00]+$")
    )]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub handle: String,
    pub agent_id: String,
    pub joined_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemberList {
    pub channel: String,
    pub members: Vec<Member>,
}

/// `channel.history`: a channel's messages in order (threads' replies included), after a cursor.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryRequest {
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 41, pattern = "^#?[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    )]
    pub channel: String,
    /// Only messages after this `seq` (a previous page's `nextCursor`).
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub after: Option<i64>,
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 200))]
    pub limit: Option<i64>,
}

/// Relay extension of the session message a recipient gets: why it came, from whom, and where
/// to answer. The delivery runner puts `reason`, `priority` and `deadline` in the delivery's
/// `MessageContext`; the harness shows the rest to the agent.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RelayContext {
    /// The relay message (answer it with `threadId` set to this).
    pub message_id: String,
    /// `dm`, `message`, `mention`, `thread-reply` or `notification`.
    pub reason: String,
    pub from: Sender,
    pub conversation: String,
    pub channel: Option<String>,
    pub thread_id: Option<String>,
    pub hop: i64,
    pub priority: Option<Priority>,
    pub deadline: Option<String>,
}

/// Whether `s` is an RFC 3339 date-time (`2026-11-24T18:00:00Z`, `…T18:00:00.5+01:00`).
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    let zone = rest == "Z" || rest == "z" || {
        let z = rest.as_bytes();
        z.len() == 6
            && matches!(z[0], b'+' | b'-')
            && z[3] == b':'
            && z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit)
    };
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(99);
    zone && (1..=12).contains(&num(5..7))
        && (1..=31).contains(&num(8..10))
        && num(11..13) < 24
        && num(14..16) < 60
        && num(17..19) < 61
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_are_lowercase_tokens_with_or_without_a_hash() {
        assert_eq!(channel_of("#Ops").as_deref(), Some("ops"));
        assert_eq!(channel_of("build-2").as_deref(), Some("build-2"));
        assert_eq!(channel_of("#"), None);
        assert_eq!(channel_of("-x"), None);
        assert_eq!(channel_of("a b"), None);
        assert_eq!(channel_of(&"x".repeat(41)), None);
    }

    #[test]
    fn deadlines_must_be_rfc3339() {
        assert!(is_rfc3339("2026-11-24T18:00:00Z"));
        assert!(is_rfc3339("2026-11-24T18:00:00.250+01:00"));
        assert!(!is_rfc3339("2026-11-24"));
        assert!(!is_rfc3339("2026-13-24T18:00:00Z"));
        assert!(!is_rfc3339("2026-11-24T18:00:00"));
        assert!(!is_rfc3339("tomorrow at noon, ok"));
    }
}

/// `message.sendFor`, from coordination: a message sent for whoever asked it to be sent (a
/// proposal's question goes out from its proposer). Only the coordination service may call it.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendForRequest {
    /// The agent that asked, when an agent asked (on its own harness subject).
    pub agent_id: Option<String>,
    /// Who asked otherwise, as a request context names callers (`operator:<keyId>`, …).
    pub caller: String,
    pub message: SendRequest,
}

/// `message.actionResult`, from coordination: how an invocation ended, told to the agent that
/// invoked it as a DM from the exposing agent (reason `action-result`), once per key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionResultRequest {
    pub from_agent_id: String,
    pub to_agent_id: String,
    pub text: String,
    pub idempotency_key: String,
}

/// Whether an action result was posted: not when its recipient was released meanwhile.
#[skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ActionResultPosted {
    pub message_id: Option<String>,
}
