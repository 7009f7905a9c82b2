-- The resource links tools returned in a chat, for the buttons that open
-- them: a button's data holds only key. Bounded per chat by the writer,
-- and deleted once past expires_at.
CREATE TABLE links (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key        text   NOT NULL UNIQUE,
    chat_id    text   NOT NULL,
    user_id    text   NOT NULL,
    server     text   NOT NULL,
    uri        text   NOT NULL,
    name       text   NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);

CREATE INDEX links_chat ON links (chat_id, id);
CREATE INDEX links_expiry ON links (expires_at);
