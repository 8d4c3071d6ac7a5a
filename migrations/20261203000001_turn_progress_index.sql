-- Turn progress is asked on every receipt (issue 39): "is any target of this turn still
-- pending, and which one failed?" It joined every message of the database to find the turn's
-- (registry_messages had no index on turn_id), so a receipt cost grew with the whole table.
-- A target now carries its turn, and the question is one index range.
ALTER TABLE registry_message_targets ADD COLUMN turn_id TEXT;
UPDATE registry_message_targets t SET turn_id = m.turn_id FROM registry_messages m WHERE m.message_id = t.message_id;
CREATE INDEX registry_message_targets_by_turn ON registry_message_targets (turn_id, outcome);
-- A turn's messages in order (its members, a turn's end): also a scan of every message before.
CREATE INDEX registry_messages_by_turn ON registry_messages (turn_id, seq);
