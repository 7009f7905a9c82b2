-- Initial schema. Times are UTC Unix milliseconds; NULL means "not yet" or
-- "never" as each column says.

-- A chat is a Telegram chat (or the terminal's local chat id).
CREATE TABLE chats (
    id         TEXT    PRIMARY KEY,
    created_at INTEGER NOT NULL
) STRICT;

-- A conversation is the history sent to the model. /reset ends the active
-- one (ended_at set) and starts another; ended ones stay for the record.
CREATE TABLE conversations (
    id         INTEGER PRIMARY KEY,
    chat_id    TEXT    NOT NULL REFERENCES chats (id),
    created_at INTEGER NOT NULL,
    ended_at   INTEGER
) STRICT;

-- At most one active conversation per chat, enforced by the database.
CREATE UNIQUE INDEX conversations_active ON conversations (chat_id) WHERE ended_at IS NULL;

CREATE TABLE messages (
    id                INTEGER PRIMARY KEY,
    conversation_id   INTEGER NOT NULL REFERENCES conversations (id),
    role              TEXT    NOT NULL,
    content           TEXT    NOT NULL,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_conversation ON messages (conversation_id, id);

-- The audit log. No foreign keys: an audit row must never be refused, and
-- operators call tools outside any chat.
CREATE TABLE tool_calls (
    id           INTEGER PRIMARY KEY,
    user_id      TEXT    NOT NULL,
    chat_id      TEXT    NOT NULL,
    server       TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    arguments    TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    duration_ms  INTEGER NOT NULL,
    result_bytes INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX tool_calls_chat ON tool_calls (chat_id, id);

-- Follow-up questions and approvals waiting for the user. Open while
-- resolved_at is NULL; expires_at NULL means never.
CREATE TABLE pending (
    id              INTEGER PRIMARY KEY,
    chat_id         TEXT    NOT NULL REFERENCES chats (id),
    user_id         TEXT    NOT NULL,
    conversation_id INTEGER REFERENCES conversations (id),
    kind            TEXT    NOT NULL CHECK (kind IN ('question', 'approval')),
    payload         TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER,
    resolved_at     INTEGER,
    resolution      TEXT
) STRICT;

-- At most one open interaction per chat, enforced by the database.
CREATE UNIQUE INDEX pending_open ON pending (chat_id) WHERE resolved_at IS NULL;
CREATE INDEX pending_expiry ON pending (expires_at) WHERE resolved_at IS NULL AND expires_at IS NOT NULL;

-- Telegram updates, written before the poller advances its offset.
-- processed_at NULL: not handled yet.
CREATE TABLE inbox (
    update_id    INTEGER PRIMARY KEY,
    chat_id      TEXT    NOT NULL,
    payload      BLOB    NOT NULL,
    received_at  INTEGER NOT NULL,
    processed_at INTEGER
) STRICT;

CREATE INDEX inbox_unprocessed ON inbox (update_id) WHERE processed_at IS NULL;
