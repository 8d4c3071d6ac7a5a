-- Action invocations (issue 19): one row per invocation, keyed by who invoked it, so the same
-- invocation id from the same caller answers with the first outcome instead of running again.
CREATE TABLE registry_invocations (
    workspace     TEXT NOT NULL,
    caller        TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    doc           JSONB NOT NULL,
    PRIMARY KEY (workspace, caller, invocation_id)
);
COMMENT ON TABLE registry_invocations IS 'owner: session-registry';
