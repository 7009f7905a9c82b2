-- What an MCP App gave the model for its chat's next turn
-- (ui/update-model-context): one row a chat, the newest, taken (deleted)
-- by the turn, whichever instance runs it, and deleted once past
-- expires_at.
CREATE TABLE app_contexts (
    chat_id    text   PRIMARY KEY,
    user_id    text   NOT NULL,
    title      text   NOT NULL,
    text       text   NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
);

CREATE INDEX app_contexts_expiry ON app_contexts (expires_at);
