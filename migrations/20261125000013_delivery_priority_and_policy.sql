-- Seed 001 MessageContext.priority and deadline on session sends: a delivery's priority
-- (urgent 3, high 2, normal 1, low 0) orders an agent's queue before its seq, and a delivery
-- still waiting at its deadline (Unix ms) fails with reason `deadline`.
ALTER TABLE deliveries ADD COLUMN priority SMALLINT NOT NULL DEFAULT 1, ADD COLUMN deadline BIGINT;
CREATE INDEX deliveries_agent_queue ON deliveries (agent_id, priority DESC, seq)
    WHERE status IN ('pending', 'deferred');

-- A workspace's delivery policy (seed 001 step 3; owner: session-registry), handed to the
-- delivery runner with each message; a delivery it refuses keeps the reason (owner:
-- delivery-runner) and fails with it when its turn comes.
ALTER TABLE registry_workspaces ADD COLUMN delivery_policy JSONB;
ALTER TABLE deliveries ADD COLUMN refusal TEXT;
