-- Webhooks and schedules (services/automation owns every table here).

-- A workspace's subscriptions of a URL to event types.
CREATE TABLE webhook_subscriptions (
    webhook_id           TEXT PRIMARY KEY,
    workspace            TEXT NOT NULL,
    url                  TEXT NOT NULL,
    -- Event types, or '*' for all.
    event_types          TEXT[] NOT NULL,
    secret               TEXT NOT NULL,
    description          TEXT,
    enabled              BOOLEAN NOT NULL DEFAULT true,
    disabled_reason      TEXT,
    consecutive_failures INT NOT NULL DEFAULT 0,
    created_by           TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX webhook_subscriptions_by_workspace ON webhook_subscriptions (workspace, created_at);
COMMENT ON TABLE webhook_subscriptions IS 'owner: automation';

-- The outbox of posts: one row per (subscription, event), written in the transaction that
-- moves the cursor, so an event is queued for a subscription exactly once.
CREATE TABLE webhook_deliveries (
    delivery_id     TEXT PRIMARY KEY,
    webhook_id      TEXT NOT NULL REFERENCES webhook_subscriptions (webhook_id) ON DELETE CASCADE,
    event_seq       BIGINT NOT NULL,
    event_type      TEXT NOT NULL,
    -- The exact bytes posted and signed.
    body            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_status     INT,
    last_error      TEXT,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT,
    UNIQUE (webhook_id, event_seq)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created_at DESC);
COMMENT ON TABLE webhook_deliveries IS 'owner: automation';

-- The fan-out's position in the event log.
CREATE TABLE webhook_cursor (
    id  INT PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO webhook_cursor VALUES (1, 0);
COMMENT ON TABLE webhook_cursor IS 'owner: automation';

CREATE TABLE schedules (
    schedule_id TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL,
    name        TEXT,
    cron        TEXT,
    time_zone   TEXT NOT NULL,
    run_at      BIGINT,
    action      JSONB NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('active', 'paused', 'done')),
    next_run_at BIGINT,
    -- The due time of a run being retried after a transient failure (next_run_at is then
    -- when it is tried again).
    retry_due_at BIGINT,
    runs        INT NOT NULL DEFAULT 0,
    -- The caller it runs as (`operator:<keyId>`, `service:<name>`, …).
    created_by  TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    CHECK ((cron IS NULL) <> (run_at IS NULL))
);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE status = 'active';
CREATE INDEX schedules_by_workspace ON schedules (workspace, created_at);
COMMENT ON TABLE schedules IS 'owner: automation';

-- One row per time a schedule was due: the primary key is what makes it fire once.
CREATE TABLE schedule_runs (
    schedule_id TEXT NOT NULL REFERENCES schedules (schedule_id) ON DELETE CASCADE,
    due_at      BIGINT NOT NULL,
    fired_at    BIGINT NOT NULL,
    ok          BOOLEAN NOT NULL,
    result      JSONB NOT NULL,
    PRIMARY KEY (schedule_id, due_at)
);
COMMENT ON TABLE schedule_runs IS 'owner: automation';

-- schedule.fired and webhook.disabled, forwarded to the event log (relay_bus::outbox).
CREATE TABLE automation_events (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    type          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    payload       JSONB NOT NULL,
    traceparent   TEXT,
    workspace     TEXT NOT NULL,
    forwarded     BOOLEAN NOT NULL DEFAULT false,
    forward_error TEXT
);
CREATE INDEX automation_events_unforwarded ON automation_events (seq) WHERE NOT forwarded;
COMMENT ON TABLE automation_events IS 'owner: automation';
