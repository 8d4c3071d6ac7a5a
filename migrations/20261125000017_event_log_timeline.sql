-- The event log across a Postgres failover (services/event-ingest).
--
-- With asynchronous replication a promoted standby may lack the newest events its old primary
-- acknowledged, so its head is behind seqs that clients have already seen; handing those seqs
-- out again would make a client that resumes after them skip the new events. A promotion starts
-- a new server timeline, so the head remembers the timeline it last handed out seqs on, and the
-- first append on a later timeline T continues past (T - 1) << 40, above any seq of an earlier
-- timeline (2^40 appends per timeline; still an exact number in JavaScript for 8,191 timelines).
ALTER TABLE event_log_head ADD COLUMN timeline INTEGER NOT NULL DEFAULT 1;
