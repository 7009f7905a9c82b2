-- What a chat asked of the assistant for itself: instructions added to
-- the system prompt (/system). One row per chat that set something.
CREATE TABLE chat_settings (
    chat_id      TEXT    PRIMARY KEY,
    instructions TEXT    NOT NULL DEFAULT '',
    updated_at   INTEGER NOT NULL
) STRICT;
