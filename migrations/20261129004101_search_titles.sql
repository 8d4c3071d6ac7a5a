-- session.search is full-text over titles and messages (seed 002): a session's title gets a
-- search vector of its own beside its messages' (registry_messages.content_tsv).
ALTER TABLE registry_sessions ADD COLUMN title_tsv tsvector
    GENERATED ALWAYS AS (to_tsvector('english', coalesce(doc->>'title', ''))) STORED;
CREATE INDEX registry_sessions_title_fts ON registry_sessions USING gin (title_tsv);
