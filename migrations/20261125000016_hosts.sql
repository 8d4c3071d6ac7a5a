-- Agent hosts (services/session-registry): one row per agent-spawner host, upserted by its
-- heartbeats. `load` is what the host reported, plus the spawns placed on it since (so
-- placements made at once spread out); `status` moves online → offline (no heartbeat for
-- hosts.offline_after_ms) → lost (hosts.on_lost applied), and back to online on a heartbeat.
CREATE TABLE registry_hosts (
    host_id       TEXT PRIMARY KEY,
    labels        JSONB NOT NULL,
    capacity      INT NOT NULL,
    load          INT NOT NULL,
    clis          TEXT[] NOT NULL,
    agents        TEXT[] NOT NULL,
    version       TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('online', 'offline', 'lost')),
    first_seen_at BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    offline_since BIGINT
);
CREATE INDEX registry_hosts_online_seen ON registry_hosts (last_seen_at) WHERE status = 'online';
CREATE INDEX registry_hosts_offline ON registry_hosts (offline_since) WHERE status = 'offline';
COMMENT ON TABLE registry_hosts IS 'owner: session-registry';

-- The live agents of a host, for marking them offline with it.
CREATE INDEX registry_agents_by_host ON registry_agents ((doc->>'hostId'))
    WHERE doc->>'hostId' IS NOT NULL AND doc->>'status' <> 'disposed';
