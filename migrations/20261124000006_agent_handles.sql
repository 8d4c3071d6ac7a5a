-- Agents' handles (issue 18): the name other agents and people address an agent by, unique
-- among the live agents of its workspace. The columns are read from the agent's document, so
-- the registry's writes stay as they were; workspace is the session's, set at insert.
ALTER TABLE registry_agents ADD COLUMN workspace text NOT NULL DEFAULT 'default';
UPDATE registry_agents a SET workspace = s.workspace FROM registry_sessions s WHERE s.session_id = a.session_id;
ALTER TABLE registry_agents ADD COLUMN handle text GENERATED ALWAYS AS (doc->>'handle') STORED;
ALTER TABLE registry_agents ADD COLUMN live boolean
    GENERATED ALWAYS AS (coalesce(doc->>'status', '') <> 'disposed') STORED;
ALTER TABLE registry_agents ADD COLUMN last_activity_at bigint
    GENERATED ALWAYS AS ((doc->>'lastActivityAt')::bigint) STORED;
CREATE UNIQUE INDEX registry_agents_live_handle ON registry_agents (workspace, handle) WHERE live AND handle IS NOT NULL;
CREATE INDEX registry_agents_by_workspace ON registry_agents (workspace, last_activity_at DESC, agent_id);
