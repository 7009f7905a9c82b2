-- Forms MCP servers ask users to fill in in the middle of a tool call
-- (elicitation). Open while resolved_at is NULL: the call waits for it, on
-- one instance, and reads the answer from here, whichever instance took
-- it. payload is the question and the answers so far, JSON the agent
-- owns; version counts its saves, so that two presses at once cannot lose
-- one another's answer.
CREATE TABLE forms (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chat_id     text   NOT NULL REFERENCES chats (id),
    user_id     text   NOT NULL,
    payload     text   NOT NULL,
    version     bigint NOT NULL DEFAULT 0,
    created_at  bigint NOT NULL,
    expires_at  bigint NOT NULL,
    resolved_at bigint,
    resolution  text
);

CREATE INDEX forms_open ON forms (chat_id, id) WHERE resolved_at IS NULL;
