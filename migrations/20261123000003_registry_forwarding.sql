-- The registry forwards its stored events to the event log (event-ingest); `forwarded` marks
-- the ones the log has acknowledged. Forwarding is idempotent on event_id, so a crash between
-- the append and this flag only means one harmless re-send.
ALTER TABLE registry_events ADD COLUMN forwarded BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX registry_events_unforwarded ON registry_events (seq) WHERE NOT forwarded;
-- Why the log refused an event (it is then not retried; the reason stays here and in the logs).
ALTER TABLE registry_events ADD COLUMN forward_error TEXT;
