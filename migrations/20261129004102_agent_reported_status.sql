-- The status each agent last reported (seed 000 `status.changed` and `status.<state>` events),
-- which the registry follows from the event log on a cursor of its own (it never reads the
-- delivery runner's delivery_agents): agent listings show it and filter by it.
CREATE TABLE registry_agent_status (
    agent_id TEXT PRIMARY KEY REFERENCES registry_agents (agent_id) ON DELETE CASCADE,
    status   TEXT NOT NULL,
    reason   TEXT,
    -- The event's ts (Unix ms) and seq: a replayed or older event never overwrites a newer one.
    since    BIGINT NOT NULL,
    seq      BIGINT NOT NULL
);
CREATE INDEX registry_agent_status_by_status ON registry_agent_status (status);
COMMENT ON TABLE registry_agent_status IS 'owner: session-registry';

CREATE TABLE registry_status_cursor (
    id  INT PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO registry_status_cursor (id, seq) VALUES (1, 0);
COMMENT ON TABLE registry_status_cursor IS 'owner: session-registry';
