-- What an MCP App gave the model for its chat's next turn
-- (ui/update-model-context): one row a chat, the newest, taken (deleted)
-- by the turn, and deleted once past expires_at.
CREATE TABLE app_contexts (
    chat_id    TEXT    PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    title      TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

CREATE INDEX app_contexts_expiry ON app_contexts (expires_at);
