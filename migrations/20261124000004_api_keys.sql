-- Workspace-scoped API keys for the gateway. Only the SHA-256 digest of a token's secret is
-- kept; the token itself is shown once, by key.create.
CREATE TABLE registry_api_keys (
    key_id      text PRIMARY KEY,
    workspace   text NOT NULL,
    name        text NOT NULL,
    role        text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    secret_hash bytea NOT NULL,
    created_at  bigint NOT NULL,
    created_by  text,
    revoked_at  bigint
);
CREATE INDEX registry_api_keys_workspace ON registry_api_keys (workspace, created_at DESC);
COMMENT ON TABLE registry_api_keys IS 'owner: session-registry';
