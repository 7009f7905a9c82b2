-- The calls of tools that have an MCP App, for the pages that show them:
-- a page's URL names only id. Bounded in size and per chat by the
-- writer, and deleted once past expires_at.
CREATE TABLE app_views (
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    chat_id      TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    server       TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    resource_uri TEXT    NOT NULL,
    title        TEXT    NOT NULL,
    input        BLOB,
    result       BLOB,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX app_views_chat ON app_views (chat_id, seq);
CREATE INDEX app_views_expiry ON app_views (expires_at);
