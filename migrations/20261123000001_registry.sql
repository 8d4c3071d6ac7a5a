-- Session registry (services/session-registry). Tables owned by the registry are prefixed
-- `registry_`; only the registry writes them.
--
-- Each row keeps its full contract record in `doc` (JSONB) beside the columns that queries
-- filter, join or order on. `save_*` in services/session-registry/src/store.rs writes both from
-- one struct, so they cannot disagree.

CREATE TABLE registry_sessions (
    session_id          TEXT PRIMARY KEY,
    -- 'purged' is a tombstone: the data is gone, the id stays taken so a late call gets a
    -- clear conflict instead of silently recreating the session.
    status              TEXT NOT NULL CHECK (status IN ('active', 'closed', 'archived', 'discovered', 'purged')),
    parent_session_id   TEXT,
    adapter_session_id  TEXT,
    execution_target_id TEXT,
    is_imported         BOOLEAN NOT NULL DEFAULT false,
    -- Set on a child when it is merged into or abandoned by its parent.
    branch_state        TEXT CHECK (branch_state IN ('merged', 'abandoned')),
    created_at          BIGINT NOT NULL,
    last_activity_at    BIGINT NOT NULL,
    doc                 JSONB
);
CREATE INDEX registry_sessions_by_activity ON registry_sessions (last_activity_at DESC, session_id);
CREATE INDEX registry_sessions_by_status ON registry_sessions (status, last_activity_at DESC);
CREATE INDEX registry_sessions_by_parent ON registry_sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;
CREATE INDEX registry_sessions_by_adapter_session ON registry_sessions (adapter_session_id) WHERE adapter_session_id IS NOT NULL;

CREATE TABLE registry_agents (
    agent_id           TEXT PRIMARY KEY,
    session_id         TEXT NOT NULL REFERENCES registry_sessions (session_id) ON DELETE CASCADE,
    attach_seq         BIGINT GENERATED ALWAYS AS IDENTITY,
    adapter_session_id TEXT,
    doc                JSONB NOT NULL
);
CREATE INDEX registry_agents_by_session ON registry_agents (session_id, attach_seq);
CREATE INDEX registry_agents_by_adapter_session ON registry_agents (adapter_session_id);

CREATE TABLE registry_turns (
    turn_id     TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES registry_sessions (session_id) ON DELETE CASCADE,
    turn_number BIGINT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('active', 'completed', 'error')),
    doc         JSONB NOT NULL,
    UNIQUE (session_id, turn_number)
);
-- At most one active turn per session.
CREATE UNIQUE INDEX registry_turns_one_active ON registry_turns (session_id) WHERE status = 'active';

CREATE TABLE registry_messages (
    message_id   TEXT PRIMARY KEY,
    seq          BIGINT GENERATED ALWAYS AS IDENTITY,
    session_id   TEXT NOT NULL REFERENCES registry_sessions (session_id) ON DELETE CASCADE,
    turn_id      TEXT,
    role         TEXT NOT NULL,
    content_text TEXT NOT NULL,
    content_tsv  TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', content_text)) STORED,
    created_at   BIGINT NOT NULL,
    doc          JSONB NOT NULL
);
CREATE UNIQUE INDEX registry_messages_by_session ON registry_messages (session_id, seq);
CREATE INDEX registry_messages_fts ON registry_messages USING GIN (content_tsv);

-- Which agents a message was routed to and how far each got; drives turn completion.
CREATE TABLE registry_message_targets (
    message_id      TEXT NOT NULL REFERENCES registry_messages (message_id) ON DELETE CASCADE,
    agent_id        TEXT NOT NULL,
    acknowledged_at BIGINT,
    outcome         TEXT,
    error           TEXT,
    completed_at    BIGINT,
    PRIMARY KEY (message_id, agent_id)
);

CREATE TABLE registry_usage (
    session_id          TEXT PRIMARY KEY REFERENCES registry_sessions (session_id) ON DELETE CASCADE,
    adapter_count       BIGINT NOT NULL,
    total_calls         BIGINT NOT NULL,
    total_input_tokens  BIGINT NOT NULL,
    total_output_tokens BIGINT NOT NULL,
    total_tokens        BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);

-- Every event the registry emits, written in the same transaction as the change it reports
-- (so an acknowledged change always has its event), then published on NATS after commit.
-- No foreign key: a purge deletes a session's events and counts them.
CREATE TABLE registry_events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    type       TEXT NOT NULL,
    ts         BIGINT NOT NULL,
    payload    JSONB NOT NULL
);
CREATE INDEX registry_events_by_session ON registry_events (session_id, seq);
