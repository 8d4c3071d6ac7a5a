//! Subject names. RPCs are `<domain>.<key>`; events are past tense in the same domain.

/// Every `session.*` RPC the registry answers, as (endpoint name, subject).
pub mod session {
    pub const CREATE: &str = "session.create";
    pub const GET: &str = "session.get";
    pub const LIST: &str = "session.list";
    pub const UPDATE: &str = "session.update";
    pub const CLOSE: &str = "session.close";
    pub const RESUME: &str = "session.resume";
    pub const ARCHIVE: &str = "session.archive";
    pub const PURGE: &str = "session.purge";
    pub const FORK: &str = "session.fork";
    pub const MERGE: &str = "session.merge";
    pub const ABANDON: &str = "session.abandon";
    pub const GET_CHILDREN: &str = "session.getChildren";
    pub const GET_STATUS_COUNTS: &str = "session.getStatusCounts";
    pub const GET_BY_ADAPTER_SESSION_ID: &str = "session.getByAdapterSessionId";
    pub const SEARCH: &str = "session.search";
    pub const AGENT_ATTACH: &str = "session.agent.attach";
    pub const AGENT_RELEASE: &str = "session.agent.release";
    pub const AGENT_CAPABILITIES: &str = "session.agent.capabilities";
    pub const AGENT_DECLARE_CAPABILITIES: &str = "session.agent.declareCapabilities";
    pub const SEND_MESSAGE: &str = "session.sendMessage";
    pub const USER_MESSAGE_ACKNOWLEDGE: &str = "session.user_message.acknowledge";
    pub const USER_MESSAGE_COMPLETE: &str = "session.user_message.complete";
    pub const TURNS: &str = "session.turns";
    pub const MESSAGES: &str = "session.messages";
    pub const USAGE: &str = "session.usage";
    pub const RESOLVE_AGENT_CONFIG: &str = "session.resolveAgentConfig";
    pub const SNAPSHOT_EXPORT: &str = "session.snapshot.export";
    pub const SNAPSHOT_IMPORT: &str = "session.snapshot.import";
    pub const SNAPSHOT_VALIDATE: &str = "session.snapshot.validate";

    /// The catch-all subject carrying every session event in one envelope.
    pub const EVENT: &str = "session.event";

    /// The subject of a typed session event, e.g. `session.turn.started` for `turn.started`.
    pub fn event_subject(event_type: &str) -> String {
        format!("session.{event_type}")
    }
}

/// The event log (event ingestion service).
pub mod event {
    pub const APPEND: &str = "event.append";
    pub const QUERY: &str = "event.query";
    pub const SINCE: &str = "event.since";
    pub const PURGE_SESSION: &str = "event.purgeSession";

    /// Every committed event is published on `event.committed.<type>`, with its seq; subscribe
    /// to `event.committed.>` for all of them.
    pub fn committed_subject(event_type: &str) -> String {
        format!("event.committed.{event_type}")
    }
}

/// Deliveries (delivery runner).
pub mod delivery {
    pub const GET: &str = "delivery.get";
    pub const LIST: &str = "delivery.list";
    pub const CANCEL: &str = "delivery.cancel";
    pub const RETRY: &str = "delivery.retry";
    pub const FLUSH: &str = "delivery.flush";
    pub const REPORT: &str = "delivery.report";

    /// Delivery events: `delivery.created`, `delivery.accepted`, `delivery.delivered`,
    /// `delivery.deferred`, `delivery.failed` (and `delivery.cancelled`).
    pub fn event_subject(kind: &str) -> String {
        format!("delivery.{kind}")
    }
}

/// Agent control (served by the delivery runner, which owns what an agent is sent).
pub mod agent {
    pub const PAUSE: &str = "agent.pause";
    pub const RESUME: &str = "agent.resume";
    pub const STOP: &str = "agent.stop";
    pub const INPUT: &str = "agent.input";
    /// Start an agent CLI under a harness for a session (served by an agent-harness spawner).
    pub const SPAWN: &str = "agent.spawn";
}
