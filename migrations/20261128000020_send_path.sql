-- The send path (services/delivery-runner): deliveries_agent_queue (agent_id, priority DESC, seq),
-- partial on the same statuses, serves every query deliveries_waiting (agent_id, seq) did (the
-- claim's loose scan by agent, the walk, the policy's count), so a delivery's writes no longer
-- keep both up to date.
DROP INDEX IF EXISTS deliveries_waiting;
