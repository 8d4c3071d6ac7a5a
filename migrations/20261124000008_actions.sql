-- Actions (issue 19): what each agent exposes for the others to invoke (seed 000
-- `actions.expose`). An agent's set is replaced whole; its rows go with the agent, and a
-- released agent's are not listed (registry_agents.live).
CREATE TABLE registry_actions (
    agent_id   TEXT NOT NULL REFERENCES registry_agents (agent_id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    workspace  TEXT NOT NULL,
    doc        JSONB NOT NULL,
    exposed_at BIGINT NOT NULL,
    PRIMARY KEY (agent_id, name)
);
CREATE INDEX registry_actions_by_workspace ON registry_actions (workspace, name);
COMMENT ON TABLE registry_actions IS 'owner: session-registry';
