-- The registry follows the event log for what became of its messages (the delivery runner's
-- `delivery.*` receipts, the agents' idle status): its position there moves in the transaction
-- that applies a page, as the runner's `delivery_cursor` does.
CREATE TABLE registry_cursor (
    id  INT PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO registry_cursor VALUES (1, 0);
COMMENT ON TABLE registry_cursor IS 'owner: session-registry';

-- Delivered targets not finished yet: the agents to ask whether they went idle.
CREATE INDEX registry_message_targets_open ON registry_message_targets (agent_id, acknowledged_at)
    WHERE acknowledged_at IS NOT NULL AND outcome IS NULL;
