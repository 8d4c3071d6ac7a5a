-- Bounded growth (services/delivery-runner/src/retention.rs): finished deliveries are deleted
-- after runner.keep_finished_ms, oldest first, and then the stored messages no delivery refers
-- to; these indexes find them without reading the live ones.
CREATE INDEX deliveries_finished ON deliveries (updated_at) WHERE status IN ('delivered', 'failed', 'cancelled');
CREATE INDEX delivery_messages_by_created ON delivery_messages (created_at);

-- The hot queue tables are updated on every hand-over and receipt: vacuum them after 1 % of
-- their rows changed (the default waits for 20 %), so dead tuples stay few under steady load.
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE delivery_agents SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02);

-- services/automation/src/retention.rs: a webhook's finished deliveries, oldest first, and a
-- schedule's runs by when they fired.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';
CREATE INDEX schedule_runs_by_fired ON schedule_runs (fired_at);

-- services/permission-manager (store::delete_resolved): resolved requests and questions, oldest
-- first.
CREATE INDEX permission_requests_resolved ON permission_requests (decided_at) WHERE status <> 'pending';
CREATE INDEX questions_resolved ON questions (answered_at) WHERE status <> 'pending';
