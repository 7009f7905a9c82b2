-- Each turn's write (AppendTurn) is named by a random key, stored in its
-- transaction: an attempt after a lost connection first looks its key up,
-- so that a commit whose answer was lost is not written twice. A key is
-- needed for the seconds a write is retried; InboxPrune forgets those
-- over an hour old.
CREATE TABLE turn_writes (
    key             text   PRIMARY KEY,
    conversation_id bigint NOT NULL,
    created_at      bigint NOT NULL
);

CREATE INDEX turn_writes_created ON turn_writes (created_at);
