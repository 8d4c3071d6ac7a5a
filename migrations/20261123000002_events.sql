-- Event log (services/event-ingest). Only event-ingest writes these tables.
--
-- Ordering: every append transaction first updates the single row of `event_log_head`, which
-- holds its lock until commit. Appends therefore commit one after another in seq order, so a
-- reader that has seen seq N can never later find a new event below N, and seqs are dense.

CREATE TABLE event_log_head (
    id       BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
    last_seq BIGINT NOT NULL
);
INSERT INTO event_log_head (id, last_seq) VALUES (true, 0);

CREATE TABLE event_session_heads (
    session_id TEXT PRIMARY KEY,
    last_seq   BIGINT NOT NULL
);

CREATE TABLE events (
    seq         BIGINT PRIMARY KEY,
    event_id    TEXT NOT NULL UNIQUE,
    type        TEXT NOT NULL,
    ts          BIGINT NOT NULL,
    session_id  TEXT,
    session_seq BIGINT,
    agent_name  TEXT,
    agent_id    TEXT,
    payload     JSONB NOT NULL
);
CREATE INDEX events_by_session ON events (session_id, seq) WHERE session_id IS NOT NULL;
CREATE INDEX events_by_type ON events (type, seq);
CREATE INDEX events_by_ts ON events (ts);
