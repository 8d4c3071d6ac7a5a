-- One owner per table: the registry no longer writes the delivery runner's tables and the
-- runner no longer reads the registry's. The registry stores what the runner must know (a
-- sent message and its deliveries, an agent's changes) in its hand-off outbox in the same
-- transaction as the change, and hands it over on `delivery.handoff` in commit order; the
-- runner keeps its own copy. The copies below seed that state once from the old layout.

-- owner: session-registry. What the runner has not acknowledged yet, in commit order; a row
-- goes once the runner answered.
CREATE TABLE registry_handoffs (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  TEXT NOT NULL,
    -- A `HandoffItem` (relay-contracts delivery.rs): a message with its deliveries, or an agent.
    item        JSONB NOT NULL,
    traceparent TEXT
);
COMMENT ON TABLE registry_handoffs IS 'owner: session-registry';

-- The registry names each message's delivery ids itself (answered by session.sendMessage).
ALTER TABLE registry_message_targets ADD COLUMN delivery_id TEXT;
UPDATE registry_message_targets t SET delivery_id = d.delivery_id
FROM deliveries d WHERE d.message_id = t.message_id AND d.agent_id = t.agent_id;

-- owner: delivery-runner. The messages its deliveries carry, as handed over.
CREATE TABLE delivery_messages (
    message_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    doc        JSONB NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX delivery_messages_by_session ON delivery_messages (session_id);
COMMENT ON TABLE delivery_messages IS 'owner: delivery-runner';
INSERT INTO delivery_messages (message_id, session_id, doc, created_at)
SELECT m.message_id, m.session_id, m.doc, m.created_at FROM registry_messages m
WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.message_id = m.message_id);

-- Not additive: a registry older than this migration inserts deliveries itself and is refused
-- here (its sends fail, nothing is lost). Replace every registry when upgrading past it.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_message_id_fkey;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_message_id_fkey
    FOREIGN KEY (message_id) REFERENCES delivery_messages (message_id) ON DELETE CASCADE;

-- owner: delivery-runner. Purged sessions: their hand-off entries up to `through_seq` are
-- stale, and one still on its way when the purge ran is ignored when it arrives.
CREATE TABLE delivery_purges (
    session_id  TEXT PRIMARY KEY,
    through_seq BIGINT NOT NULL
);
COMMENT ON TABLE delivery_purges IS 'owner: delivery-runner';

-- The agent as the registry last handed it over (status, capabilities) and that hand-off's
-- seq: an older one arriving late is ignored.
ALTER TABLE delivery_agents ADD COLUMN doc JSONB, ADD COLUMN synced_seq BIGINT NOT NULL DEFAULT 0;
INSERT INTO delivery_agents (agent_id, updated_at)
SELECT agent_id, 0 FROM registry_agents ON CONFLICT (agent_id) DO NOTHING;
UPDATE delivery_agents a SET doc = r.doc FROM registry_agents r WHERE r.agent_id = a.agent_id;
