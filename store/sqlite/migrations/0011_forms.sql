-- Forms MCP servers ask users to fill in in the middle of a tool call
-- (elicitation). Open while resolved_at is NULL: the call waits for it, on
-- one process, and reads the answer from here. payload is the question
-- and the answers so far, JSON the agent owns; version counts its saves,
-- so that two presses at once cannot lose one another's answer.
CREATE TABLE forms (
    id          INTEGER PRIMARY KEY,
    chat_id     TEXT    NOT NULL REFERENCES chats (id),
    user_id     TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    version     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    resolved_at INTEGER,
    resolution  TEXT
) STRICT;

CREATE INDEX forms_open ON forms (chat_id, id) WHERE resolved_at IS NULL;
