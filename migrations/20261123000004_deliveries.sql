-- Deliveries (services/delivery-runner owns their state machine). The registry inserts them in
-- the same transaction as their message, so a sent message always has its deliveries.
CREATE TABLE deliveries (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    delivery_id  TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL REFERENCES registry_messages (message_id) ON DELETE CASCADE,
    session_id   TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    mode         TEXT NOT NULL CHECK (mode IN ('immediate', 'next-message', 'next-tool-call', 'on-idle', 'manual')),
    status       TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'deferred', 'delivered', 'failed', 'cancelled')),
    attempts     INT NOT NULL DEFAULT 0,
    available_at BIGINT NOT NULL,
    lease_until  BIGINT,
    reason       TEXT,
    retryable    BOOLEAN,
    metadata     JSONB,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (available_at) WHERE status IN ('pending', 'deferred');
CREATE INDEX deliveries_by_agent ON deliveries (agent_id, seq);
CREATE INDEX deliveries_by_session ON deliveries (session_id, seq);
CREATE INDEX deliveries_by_message ON deliveries (message_id);
