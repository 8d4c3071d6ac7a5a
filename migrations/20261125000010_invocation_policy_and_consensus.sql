-- Invocations a policy holds for a person (issue 19): the call to replay once approved, and
-- the calling agent that gets the `action-result` message. Open ones are found by status.
ALTER TABLE registry_invocations
    ADD COLUMN call JSONB,
    ADD COLUMN caller_agent TEXT;
CREATE INDEX registry_invocations_open ON registry_invocations ((doc->>'status'))
    WHERE doc->>'status' IN ('pending', 'running');

-- Consensus proposals (issue 19): the proposal document with its voters, votes and outcome.
-- Votes are serialised by locking the row; open ones are swept at their deadline.
CREATE TABLE registry_proposals (
    proposal_id TEXT PRIMARY KEY,
    workspace   TEXT NOT NULL,
    proposer    TEXT NOT NULL,
    status      TEXT NOT NULL,
    deadline    BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    doc         JSONB NOT NULL
);
CREATE INDEX registry_proposals_open ON registry_proposals (deadline) WHERE status = 'open';
CREATE INDEX registry_proposals_by_workspace ON registry_proposals (workspace, created_at DESC);
COMMENT ON TABLE registry_proposals IS 'owner: session-registry';
