-- A running turn can be cancelled (session.turn.cancel, or a send with deliveryMode
-- interrupt / rollback).
ALTER TABLE registry_turns DROP CONSTRAINT registry_turns_status_check;
ALTER TABLE registry_turns ADD CONSTRAINT registry_turns_status_check
    CHECK (status IN ('active', 'completed', 'error', 'cancelled'));
