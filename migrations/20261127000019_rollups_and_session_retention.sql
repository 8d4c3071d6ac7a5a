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
-- purged once in that status and quiet for their windows; relay messages, finished invocations
-- and decided proposals are deleted after theirs. `status_since` is when the session entered
-- its status (store::save_session); a session inserted (created or imported) starts now, and so
-- do the sessions already here, so no window has passed for any of them on upgrade.
ALTER TABLE registry_sessions ADD COLUMN status_since BIGINT NOT NULL
    DEFAULT (extract(epoch FROM now()) * 1000)::bigint;
CREATE INDEX registry_sessions_retired ON registry_sessions (status_since) WHERE status IN ('closed', 'archived');
CREATE INDEX registry_relay_messages_by_created ON registry_relay_messages (created_at);
CREATE INDEX registry_invocations_completed ON registry_invocations (((doc->>'completedAt')::bigint))
    WHERE doc->>'completedAt' IS NOT NULL;
CREATE INDEX registry_proposals_decided ON registry_proposals (deadline) WHERE status <> 'open';

-- services/session-registry/src/hosts.rs: a lost host's agent being re-homed, until its new
-- host reports it; one the new host never reports is failed by the sweep, whichever replica
-- began the re-homing.
CREATE TABLE registry_rehomes (
    agent_id   TEXT PRIMARY KEY,
    from_host  TEXT NOT NULL,
    to_host    TEXT NOT NULL,
    started_at BIGINT NOT NULL
);
COMMENT ON TABLE registry_rehomes IS 'owner: session-registry';
