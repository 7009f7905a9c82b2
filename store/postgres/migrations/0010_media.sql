-- Images users sent, kept by reference so that later turns, /retry and a
-- restart still show them to the model. Several instances share the
-- database, so the bytes live here too, where every instance reads them,
-- keyed by the SHA-256 of their content (hash): the same image sent twice
-- is stored once. stored_at is when it was last received, and
-- MEDIA_RETENTION deletes the row after that long.
CREATE TABLE media (
    hash      text   PRIMARY KEY,
    mime_type text   NOT NULL,
    size      bigint NOT NULL,
    data      bytea  NOT NULL,
    stored_at bigint NOT NULL
);

CREATE INDEX media_stored ON media (stored_at);

-- The images a message carries, as their hashes separated by spaces, in
-- order; '' for none. A hash whose media row is gone was deleted by the
-- retention limit, and the history says so.
ALTER TABLE messages ADD COLUMN media text NOT NULL DEFAULT '';
