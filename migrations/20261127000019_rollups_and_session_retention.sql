-- Bounded growth, second part.
--
-- services/cost-aggregator/src/rollup.rs: usage rows older than costs.rollup_after_ms are
-- folded into one row per hour, session, agent, model and workspace (`rolled_up`, `calls` the
-- usage events it stands for, seq minus its first event's so it never meets an event's seq).
ALTER TABLE cost_usage ADD COLUMN calls BIGINT NOT NULL DEFAULT 1,
                       ADD COLUMN rolled_up BOOLEAN NOT NULL DEFAULT false;
CREATE UNIQUE INDEX cost_usage_hourly ON cost_usage (ts, session_id, agent_id, model, workspace) WHERE rolled_up;
CREATE INDEX cost_usage_unrolled ON cost_usage (ts) WHERE NOT rolled_up;

-- services/session-registry/src/retention.rs: closed sessions are archived and archived ones
-- purged once quiet for their windows; relay messages, finished invocations and decided
-- proposals are deleted after theirs.
CREATE INDEX registry_sessions_retired ON registry_sessions (last_activity_at) WHERE status IN ('closed', 'archived');
CREATE INDEX registry_relay_messages_by_created ON registry_relay_messages (created_at);
CREATE INDEX registry_invocations_completed ON registry_invocations (((doc->>'completedAt')::bigint))
    WHERE doc->>'completedAt' IS NOT NULL;
CREATE INDEX registry_proposals_decided ON registry_proposals (deadline) WHERE status <> 'open';
