-- Workspaces, the unit of isolation. Every row that belongs to a session, a permission request
-- or a key names its workspace; what existed before lives in `default`. Each owner fills its
-- own column: the registry from the request's workspace, the others from what the registry
-- and the caller's identity say (an agent's workspace is in its NATS identity).
CREATE TABLE registry_workspaces (
    name         text PRIMARY KEY,
    display_name text,
    created_at   bigint NOT NULL,
    created_by   text
);
COMMENT ON TABLE registry_workspaces IS 'owner: session-registry';
INSERT INTO registry_workspaces (name, created_at, created_by)
VALUES ('default', (extract(epoch FROM now()) * 1000)::bigint, 'migration');

ALTER TABLE registry_sessions ADD COLUMN workspace text NOT NULL DEFAULT 'default'
    REFERENCES registry_workspaces (name);
CREATE INDEX registry_sessions_by_workspace ON registry_sessions (workspace, last_activity_at DESC, session_id);
ALTER TABLE registry_events ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE registry_api_keys ADD FOREIGN KEY (workspace) REFERENCES registry_workspaces (name);

ALTER TABLE events ADD COLUMN workspace text NOT NULL DEFAULT 'default';
CREATE INDEX events_by_workspace ON events (workspace, seq);

ALTER TABLE permission_requests ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE questions ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE permission_events ADD COLUMN workspace text NOT NULL DEFAULT 'default';

ALTER TABLE delivery_messages ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE deliveries ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE delivery_events ADD COLUMN workspace text NOT NULL DEFAULT 'default';

ALTER TABLE cost_usage ADD COLUMN workspace text NOT NULL DEFAULT 'default';
ALTER TABLE cost_events ADD COLUMN workspace text NOT NULL DEFAULT 'default';
