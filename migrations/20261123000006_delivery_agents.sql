-- Per-agent delivery state, owned by the delivery runner. Work is claimed per agent (a lease
-- with FOR UPDATE SKIP LOCKED), so one runner at a time walks an agent's deliveries in order
-- while replicas share the agents; a killed runner's lease expires and another takes over.
CREATE TABLE delivery_agents (
    agent_id    TEXT PRIMARY KEY,
    -- Last status from the agent's status events (seed 000 AgentStatus); NULL until one is seen.
    status      TEXT,
    -- agent.pause: nothing is delivered until agent.resume.
    paused      BOOLEAN NOT NULL DEFAULT false,
    lease_until BIGINT,
    owner       TEXT,
    updated_at  BIGINT NOT NULL
);

-- The runner's position in the event log (status and tool-call boundaries), advanced in the
-- same transaction as the agent state it derives, so a crash neither loses nor repeats one.
CREATE TABLE delivery_cursor (
    id  INT PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO delivery_cursor VALUES (1, 0);

-- Delivery events (created, accepted, delivered, deferred, failed, cancelled), written in the
-- transaction that changes the delivery and forwarded to the event log like registry_events.
CREATE TABLE delivery_events (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    type          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    payload       JSONB NOT NULL,
    forwarded     BOOLEAN NOT NULL DEFAULT false,
    forward_error TEXT
);
CREATE INDEX delivery_events_unforwarded ON delivery_events (seq) WHERE NOT forwarded;

-- An agent's waiting deliveries in order: the runner's walk and the claim both read this.
CREATE INDEX deliveries_waiting ON deliveries (agent_id, seq) WHERE status IN ('pending', 'deferred');
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (available_at, agent_id) WHERE status IN ('pending', 'deferred');
-- Accepted deliveries a harness never reported on are handed over again after a while.
CREATE INDEX deliveries_accepted ON deliveries (updated_at) WHERE status = 'accepted';
