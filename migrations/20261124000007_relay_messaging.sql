-- Relay messaging (issue 18): channels, their members, and the messages agents and people send
-- each other through the mesh. Each recipient's copy is also a message in its own session
-- (registry_messages) with a delivery; these tables keep the conversation view.

CREATE TABLE registry_channels (
    workspace  text   NOT NULL,
    name       text   NOT NULL,
    topic      text,
    created_by text   NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (workspace, name)
);
COMMENT ON TABLE registry_channels IS 'owner: session-registry';

-- Members are agents; a released agent stays listed here but is skipped (not live). #general has
-- no rows: every live agent of the workspace is in it.
CREATE TABLE registry_channel_members (
    workspace text   NOT NULL,
    channel   text   NOT NULL,
    agent_id  text   NOT NULL,
    joined_at bigint NOT NULL,
    PRIMARY KEY (workspace, channel, agent_id),
    FOREIGN KEY (workspace, channel) REFERENCES registry_channels (workspace, name) ON DELETE CASCADE
);
CREATE INDEX registry_channel_members_by_agent ON registry_channel_members (agent_id);
COMMENT ON TABLE registry_channel_members IS 'owner: session-registry';

CREATE TABLE registry_relay_messages (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id      text   NOT NULL UNIQUE,
    workspace       text   NOT NULL,
    -- '#<channel>' or 'dm:<sorted participants>'; order and rate limits are per conversation.
    conversation    text   NOT NULL,
    channel         text,
    thread_id       text,
    sender          text   NOT NULL,  -- 'agent:<id>', 'key:<id>', 'service:<name>'
    idempotency_key text,
    body            text   NOT NULL,
    doc             jsonb  NOT NULL,  -- the RelayMessage as answered (recipients included)
    hop             int    NOT NULL,
    created_at      bigint NOT NULL,
    search          tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED
);
CREATE UNIQUE INDEX registry_relay_messages_idempotent ON registry_relay_messages (workspace, sender, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX registry_relay_messages_by_conversation ON registry_relay_messages (workspace, conversation, seq);
-- The rate guard counts a conversation's last minute.
CREATE INDEX registry_relay_messages_recent ON registry_relay_messages (workspace, conversation, created_at);
CREATE INDEX registry_relay_messages_by_thread ON registry_relay_messages (thread_id, seq) WHERE thread_id IS NOT NULL;
CREATE INDEX registry_relay_messages_search ON registry_relay_messages USING gin (search);
COMMENT ON TABLE registry_relay_messages IS 'owner: session-registry';
