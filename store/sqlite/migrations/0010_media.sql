-- Images users sent, kept by reference so that later turns, /retry and a
-- restart still show them to the model. The bytes are files beside the
-- database, under media/, named by the SHA-256 of their content (hash):
-- the same image sent twice is stored once. A row here says the file is
-- kept; stored_at is when it was last received, and MEDIA_RETENTION
-- deletes the row and its file after that long.
CREATE TABLE media (
    hash      TEXT    PRIMARY KEY,
    mime_type TEXT    NOT NULL,
    size      INTEGER NOT NULL,
    stored_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX media_stored ON media (stored_at);

-- The images a message carries, as their hashes separated by spaces, in
-- order; '' for none. A hash whose media row is gone was deleted by the
-- retention limit, and the history says so.
ALTER TABLE messages ADD COLUMN media TEXT NOT NULL DEFAULT '';

-- An album's updates are gathered by chat while pending.
CREATE INDEX inbox_unprocessed_chat ON inbox (chat_id, update_id) WHERE processed_at IS NULL;
