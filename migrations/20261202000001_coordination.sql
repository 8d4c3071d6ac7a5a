-- Actions and consensus become their own service, coordination (issue 38): their waits and
-- failures no longer share the registry's budget. Their tables keep their rows under the new
-- owner's names. An exposed action no longer references the registry's agents: coordination
-- asks the registry (agent.get) whether its agent is still attached, and drops the actions of
-- one that is gone.
ALTER TABLE registry_actions DROP CONSTRAINT IF EXISTS registry_actions_agent_id_fkey;
ALTER TABLE registry_actions RENAME TO coordination_actions;
ALTER INDEX registry_actions_pkey RENAME TO coordination_actions_pkey;
ALTER INDEX registry_actions_by_workspace RENAME TO coordination_actions_by_workspace;
COMMENT ON TABLE coordination_actions IS 'owner: coordination';

ALTER TABLE registry_invocations RENAME TO coordination_invocations;
ALTER INDEX registry_invocations_pkey RENAME TO coordination_invocations_pkey;
ALTER INDEX registry_invocations_open RENAME TO coordination_invocations_open;
ALTER INDEX registry_invocations_completed RENAME TO coordination_invocations_completed;
-- The invoking agent is told the outcome with a relay message the registry stores
-- (message.actionResult); until it has, the row says so and the sweep tries again.
ALTER TABLE coordination_invocations ADD COLUMN tell_pending BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX coordination_invocations_tell_pending ON coordination_invocations (invocation_id) WHERE tell_pending;
COMMENT ON TABLE coordination_invocations IS 'owner: coordination';

ALTER TABLE registry_proposals RENAME TO coordination_proposals;
ALTER INDEX registry_proposals_pkey RENAME TO coordination_proposals_pkey;
ALTER INDEX registry_proposals_open RENAME TO coordination_proposals_open;
ALTER INDEX registry_proposals_by_workspace RENAME TO coordination_proposals_by_workspace;
ALTER INDEX registry_proposals_decided RENAME TO coordination_proposals_decided;
COMMENT ON TABLE coordination_proposals IS 'owner: coordination';

-- Coordination's outbox: `action.*` and `consensus.*` under their own names, forwarded to the
-- log by relay_bus::outbox like every service's.
CREATE TABLE coordination_events (
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
CREATE INDEX coordination_events_unforwarded ON coordination_events (seq) WHERE NOT forwarded;
COMMENT ON TABLE coordination_events IS 'owner: coordination';

-- What the registry's outbox still held of them moves with them, in order.
INSERT INTO coordination_events (event_id, session_id, type, ts, payload, traceparent, workspace)
    SELECT event_id, session_id, type, ts, payload, traceparent, workspace FROM registry_events
    WHERE NOT forwarded AND (type LIKE 'action.%' OR type LIKE 'consensus.%') ORDER BY seq;
DELETE FROM registry_events WHERE NOT forwarded AND (type LIKE 'action.%' OR type LIKE 'consensus.%');
