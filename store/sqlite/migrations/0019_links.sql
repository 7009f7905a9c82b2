-- The resource links tools returned in a chat, for the buttons that open
-- them: a button's data holds only key. Bounded per chat by the writer,
-- and deleted once past expires_at.
CREATE TABLE links (
    id         INTEGER PRIMARY KEY,
    key        TEXT    NOT NULL UNIQUE,
    chat_id    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    server     TEXT    NOT NULL,
    uri        TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;

CREATE INDEX links_chat ON links (chat_id, id);
CREATE INDEX links_expiry ON links (expires_at);
