-- The rest of seed 002.

-- Personas and profiles (owner: session-registry): system prompts stored per workspace, which
-- session.resolveSystemPrompt puts together for a session's agents.
CREATE TABLE registry_prompts (
    workspace     TEXT NOT NULL REFERENCES registry_workspaces (name),
    kind          TEXT NOT NULL CHECK (kind IN ('persona', 'profile')),
    prompt_id     TEXT NOT NULL,
    name          TEXT NOT NULL,
    system_prompt TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace, kind, prompt_id)
);
COMMENT ON TABLE registry_prompts IS 'owner: session-registry';

-- Sessions whose context window turned critical and got a session.compressionRequested; a
-- session.compressed clears the row, so the next crossing asks again (owner: cost-aggregator).
CREATE TABLE cost_compression_requests (
    session_id   TEXT PRIMARY KEY,
    requested_at BIGINT NOT NULL,
    fill         DOUBLE PRECISION NOT NULL
);
COMMENT ON TABLE cost_compression_requests IS 'owner: cost-aggregator';
