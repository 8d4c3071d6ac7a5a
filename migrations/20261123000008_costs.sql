-- Token usage and cost, owned by the cost aggregator (seed 003 §6).

-- One row per usage event of the log, keyed by its seq: an event folded twice would conflict,
-- so totals (built from the rows actually inserted) never count one twice.
CREATE TABLE cost_usage (
    seq                BIGINT PRIMARY KEY,
    ts                 BIGINT NOT NULL,
    session_id         TEXT NOT NULL,
    agent_id           TEXT NOT NULL,
    model              TEXT NOT NULL,
    input_tokens       BIGINT NOT NULL,
    output_tokens      BIGINT NOT NULL,
    cache_read_tokens  BIGINT NOT NULL,
    cache_write_tokens BIGINT NOT NULL,
    -- Reported without an input/output split (usage.updated `tokens`).
    other_tokens       BIGINT NOT NULL,
    cost_usd           NUMERIC NOT NULL
);
CREATE INDEX cost_usage_by_ts ON cost_usage (ts);
CREATE INDEX cost_usage_by_agent ON cost_usage (agent_id, ts);
CREATE INDEX cost_usage_by_session ON cost_usage (session_id, ts);

-- Running totals per session and per agent, for budgets and session.usage.
CREATE TABLE cost_totals (
    scope         TEXT NOT NULL CHECK (scope IN ('session', 'agent')),
    key           TEXT NOT NULL,
    calls         BIGINT NOT NULL,
    input_tokens  BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    total_tokens  BIGINT NOT NULL,
    cost_usd      NUMERIC NOT NULL,
    -- Sessions whose totals changed since the last session.usage sent to the registry.
    usage_dirty   BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (scope, key)
);
CREATE INDEX cost_totals_dirty ON cost_totals (key) WHERE usage_dirty;

-- Which agents spent in each session (session.usage adapterCount).
CREATE TABLE cost_session_agents (
    session_id TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);

-- The latest context size of each agent of a session (session.getContextWindowState).
CREATE TABLE cost_context (
    session_id     TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    current_tokens BIGINT NOT NULL,
    max_tokens     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL,
    PRIMARY KEY (session_id, agent_id)
);

-- Budgets crossed, once each; pauses still to ask the delivery runner for.
CREATE TABLE cost_budget_hits (
    budget        TEXT NOT NULL,
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    spent_usd     NUMERIC NOT NULL,
    hit_at        BIGINT NOT NULL,
    pause_agents  TEXT[] NOT NULL DEFAULT '{}',
    pause_pending BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (budget, scope, key)
);

-- The aggregator's position in the event log, moved in the transaction that folds the events.
CREATE TABLE cost_cursor (
    id  INT PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO cost_cursor VALUES (1, 0);

-- budget.exceeded events, forwarded to the event log (relay_bus::outbox).
CREATE TABLE cost_events (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    type          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    payload       JSONB NOT NULL,
    forwarded     BOOLEAN NOT NULL DEFAULT false,
    forward_error TEXT
);
CREATE INDEX cost_events_unforwarded ON cost_events (seq) WHERE NOT forwarded;
