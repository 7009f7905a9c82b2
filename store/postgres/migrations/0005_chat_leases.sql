-- Several instances share one inbox. A chat belongs to one instance at a
-- time, the owner of its lease: only the owner runs the chat's updates,
-- so they stay in order. The owner renews the lease while it lives; once
-- expires_at (UTC Unix milliseconds of the database's clock, so that the
-- instances' clocks need not agree) has passed, another instance may take
-- the chat, and with it every update of the chat not yet processed,
-- including the one the dead owner was running: the at-least-once replay
-- of a restart. A lease is dropped once its chat has nothing pending.
CREATE TABLE chat_leases (
    chat_id    text   PRIMARY KEY,
    owner      text   NOT NULL,
    expires_at bigint NOT NULL
);

CREATE INDEX chat_leases_owner ON chat_leases (owner);
CREATE INDEX inbox_unprocessed_chat ON inbox (chat_id, update_id) WHERE processed_at IS NULL;
