-- A turn reads only as much of a long conversation as the model can take
-- (as SQLite's 0013): history_bytes is the bytes of content of the
-- conversation's messages up to and including this one, counting only
-- those not replaced, so that "the newest messages holding N bytes" is a
-- short range of an index, read newest first.
ALTER TABLE messages ADD COLUMN history_bytes bigint NOT NULL DEFAULT 0;

UPDATE messages SET history_bytes = w.total
FROM (SELECT id, sum(octet_length(content)) OVER (PARTITION BY conversation_id ORDER BY id) AS total
      FROM messages WHERE replaced_at IS NULL) AS w
WHERE messages.id = w.id;

CREATE INDEX messages_history ON messages (conversation_id, history_bytes) WHERE replaced_at IS NULL;
