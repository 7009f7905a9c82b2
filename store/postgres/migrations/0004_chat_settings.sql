-- What a chat asked of the assistant for itself: instructions added to
-- the system prompt (/system), as in SQLite's 0004.
CREATE TABLE chat_settings (
    chat_id      text   PRIMARY KEY,
    instructions text   NOT NULL DEFAULT '',
    updated_at   bigint NOT NULL
);
