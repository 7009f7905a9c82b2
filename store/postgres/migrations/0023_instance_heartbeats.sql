-- Each instance sharing the inbox proves it is alive by renewing one row
-- of its own, whatever the number of chats it holds: renewing a lease
-- per chat cost a write per chat held at every read of the inbox, so
-- leases had to be long (30 s) and a dead instance's chats waited that
-- long. A chat's lease (chat_leases) now lives while its expires_at,
-- set when the chat was taken and no longer renewed, is ahead, or while
-- its owner's heartbeat here is: expires_at (UTC Unix milliseconds of the
-- database's clock) is when the instance is taken for dead unless it
-- renews it, lease_ms the lease it renews by, which also grants every
-- instance a whole lease after the database itself restarted.
CREATE TABLE instance_heartbeats (
    name       text   PRIMARY KEY,
    expires_at bigint NOT NULL,
    lease_ms   bigint NOT NULL
);
