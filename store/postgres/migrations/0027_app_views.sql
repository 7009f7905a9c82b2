-- The calls of tools that have an MCP App, for the pages that show them:
-- a page's URL names only id. Bounded in size and per chat by the
-- writer, and deleted once past expires_at.
CREATE TABLE app_views (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text   NOT NULL UNIQUE,
    chat_id      text   NOT NULL,
    user_id      text   NOT NULL,
    server       text   NOT NULL,
    tool         text   NOT NULL,
    resource_uri text   NOT NULL,
    title        text   NOT NULL,
    input        bytea,
    result       bytea,
    created_at   bigint NOT NULL,
    expires_at   bigint NOT NULL
);

CREATE INDEX app_views_chat ON app_views (chat_id, seq);
CREATE INDEX app_views_expiry ON app_views (expires_at);
