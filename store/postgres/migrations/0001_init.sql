-- Initial schema, the same tables and rules as SQLite's 0001_init.sql.
-- Times are UTC Unix milliseconds (bigint), as in SQLite, so both engines
-- round times the same way; NULL means "not yet" or "never" as each column
-- says. Read one with to_timestamp(created_at / 1000.0).

-- A chat is a Telegram chat (or the terminal's local chat id). Writes that
-- change a chat's active conversation or open interaction lock its row
-- first, so they run one after another across every process.
CREATE TABLE chats (
    id         text   PRIMARY KEY,
    created_at bigint NOT NULL
);

-- A conversation is the history sent to the model. /reset ends the active
-- one (ended_at set) and starts another; ended ones stay for the record.
CREATE TABLE conversations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_id    text   NOT NULL REFERENCES chats (id),
    created_at bigint NOT NULL,
    ended_at   bigint
);

-- At most one active conversation per chat, enforced by the database.
CREATE UNIQUE INDEX conversations_active ON conversations (chat_id) WHERE ended_at IS NULL;

CREATE TABLE messages (
    id                bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation_id   bigint  NOT NULL REFERENCES conversations (id),
    role              text    NOT NULL,
    content           text    NOT NULL,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    created_at        bigint  NOT NULL
);

CREATE INDEX messages_conversation ON messages (conversation_id, id);

-- The audit log. No foreign keys: an audit row must never be refused, and
-- operators call tools outside any chat.
CREATE TABLE tool_calls (
    id           bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      text    NOT NULL,
    chat_id      text    NOT NULL,
    server       text    NOT NULL,
    tool         text    NOT NULL,
    arguments    text    NOT NULL,
    status       text    NOT NULL,
    duration_ms  bigint  NOT NULL,
    result_bytes bigint  NOT NULL,
    created_at   bigint  NOT NULL
);

CREATE INDEX tool_calls_chat ON tool_calls (chat_id, id);

-- Follow-up questions and approvals waiting for the user. Open while
-- resolved_at is NULL; expires_at NULL means never.
CREATE TABLE pending (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_id         text   NOT NULL REFERENCES chats (id),
    user_id         text   NOT NULL,
    conversation_id bigint REFERENCES conversations (id),
    kind            text   NOT NULL CHECK (kind IN ('question', 'approval')),
    payload         text   NOT NULL,
    created_at      bigint NOT NULL,
    expires_at      bigint,
    resolved_at     bigint,
    resolution      text
);

-- At most one open interaction per chat, enforced by the database.
CREATE UNIQUE INDEX pending_open ON pending (chat_id) WHERE resolved_at IS NULL;
CREATE INDEX pending_expiry ON pending (expires_at) WHERE resolved_at IS NULL AND expires_at IS NOT NULL;

-- Telegram updates, written before they are acknowledged to Telegram.
-- processed_at NULL: not handled yet.
CREATE TABLE inbox (
    update_id    bigint PRIMARY KEY,
    chat_id      text   NOT NULL,
    payload      bytea  NOT NULL,
    received_at  bigint NOT NULL,
    processed_at bigint
);

CREATE INDEX inbox_unprocessed ON inbox (update_id) WHERE processed_at IS NULL;
