//! Subjects that carry events (published, not requested). Request/reply subjects are declared
//! once each in [`crate::rpc`]; per-agent ones are built by [`crate::rpc::agent`].

/// Session events.
pub mod session {
    /// The catch-all subject carrying every session event in one envelope.
    pub const EVENT: &str = "session.event";

    /// The subject of a typed session event, e.g. `session.turn.started` for `turn.started`.
    pub fn event_subject(event_type: &str) -> String {
        format!("session.{event_type}")
    }
}

/// The event log.
pub mod event {
    /// Every committed event is published on `event.committed.<type>`, with its seq; subscribe
    /// to `event.committed.>` for all of them.
    pub fn committed_subject(event_type: &str) -> String {
        format!("event.committed.{event_type}")
    }
}

/// Deliveries.
pub mod delivery {
    /// Delivery events: `delivery.created`, `delivery.accepted`, `delivery.delivered`,
    /// `delivery.deferred`, `delivery.failed` (and `delivery.cancelled`).
    pub fn event_subject(kind: &str) -> String {
        format!("delivery.{kind}")
    }
}
