-- The registry's outbox for events the log keeps under their seed's own name rather than
-- `session.<type>` (registry_events): seed 000's `message.sent`, logged in the sending agent's
-- session when it sends a relay message. Written in the transaction of the change, like
-- registry_events, and forwarded to the log without a prefix.
CREATE TABLE registry_seed_events (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    type          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    payload       JSONB NOT NULL,
    traceparent   TEXT,
    workspace     TEXT NOT NULL DEFAULT 'default',
    forwarded     BOOLEAN NOT NULL DEFAULT false,
    forward_error TEXT
);
CREATE INDEX registry_seed_events_unforwarded ON registry_seed_events (seq) WHERE NOT forwarded;
CREATE INDEX registry_seed_events_by_session ON registry_seed_events (session_id, seq);
COMMENT ON TABLE registry_seed_events IS 'owner: session-registry';
