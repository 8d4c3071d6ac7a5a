-- The event log across a Postgres failover (services/event-ingest).
--
-- With asynchronous replication a promoted standby may lack the newest events its old primary
-- acknowledged, so its head is behind seqs that clients have already seen; handing those seqs
-- out again would make a client that resumes after them skip the new events. A promotion starts
-- a new server timeline, so the head remembers the timeline it last handed out seqs on, and the
-- first append on any other timeline (a promotion, or a restore onto another cluster) continues
-- at the next multiple of 2^40, above every seq handed out before (2^40 appends per block;
-- still an exact number in JavaScript for 8,191 blocks).
ALTER TABLE event_log_head ADD COLUMN timeline INTEGER NOT NULL DEFAULT 1;
-- Migrations run on the primary: start on its current timeline, so nothing jumps now.
UPDATE event_log_head SET timeline = ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int;
