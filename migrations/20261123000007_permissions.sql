-- Permission requests and questions, owned by the permission manager (seed 003 §2.3–2.4).
-- Pending ones live here, not in a process's memory, so a restart loses none.
CREATE TABLE permission_requests (
    request_id   TEXT PRIMARY KEY,
    agent_id     TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    tool         TEXT NOT NULL,
    command      TEXT,
    file_path    TEXT,
    description  TEXT NOT NULL,
    risk_level   TEXT NOT NULL CHECK (risk_level IN ('low', 'medium', 'high', 'critical')),
    status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
    -- policy:<name>, session:<override>, human or expiry.
    decided_by   TEXT,
    reason       TEXT,
    requested_at BIGINT NOT NULL,
    decided_at   BIGINT,
    expires_at   BIGINT
);
CREATE INDEX permission_requests_by_agent ON permission_requests (agent_id, requested_at);
CREATE INDEX permission_requests_by_session ON permission_requests (session_id, requested_at);
CREATE INDEX permission_requests_pending ON permission_requests (requested_at) WHERE status = 'pending';
CREATE INDEX permission_requests_expiring ON permission_requests (expires_at)
    WHERE status = 'pending' AND expires_at IS NOT NULL;

CREATE TABLE questions (
    question_id TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    question    TEXT NOT NULL,
    options     JSONB NOT NULL DEFAULT '[]',
    status      TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'expired')),
    answer      TEXT,
    asked_at    BIGINT NOT NULL,
    answered_at BIGINT,
    expires_at  BIGINT
);
CREATE INDEX questions_by_agent ON questions (agent_id, asked_at);
CREATE INDEX questions_by_session ON questions (session_id, asked_at);
CREATE INDEX questions_pending ON questions (asked_at) WHERE status = 'pending';
CREATE INDEX questions_expiring ON questions (expires_at)
    WHERE status = 'pending' AND expires_at IS NOT NULL;

-- permission.requested/resolved and question.requested/resolved, written in the transaction
-- that changes the request and forwarded to the event log (relay_bus::outbox).
CREATE TABLE permission_events (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    type          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    payload       JSONB NOT NULL,
    forwarded     BOOLEAN NOT NULL DEFAULT false,
    forward_error TEXT
);
CREATE INDEX permission_events_unforwarded ON permission_events (seq) WHERE NOT forwarded;
