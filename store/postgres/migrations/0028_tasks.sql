-- The tool calls their MCP servers run in the background (MCP Tasks): the
-- server's handle of each, with whom and what it was for, kept so that
-- polling resumes after a restart, on whichever instance holds the chat,
-- and the outcome reaches the chat once. finished_at is NULL while the
-- task is open, delivered_at until the turn that hands its outcome to the
-- conversation stored it; next_poll is written with a change of status, not at every
-- poll. deadline 0: none.
CREATE TABLE tasks (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    server         text   NOT NULL,
    handle         text   NOT NULL,
    tool           text   NOT NULL,
    chat_id        text   NOT NULL,
    user_id        text   NOT NULL,
    turn_id        text   NOT NULL,
    call_id        text   NOT NULL,
    reply_to       bigint NOT NULL,
    card_id        bigint NOT NULL DEFAULT 0,
    status         text   NOT NULL,
    status_message text   NOT NULL,
    next_poll      bigint NOT NULL,
    deadline       bigint NOT NULL,
    created_at     bigint NOT NULL,
    finished_at    bigint,
    delivered_at   bigint,
    outcome        bytea,
    UNIQUE (server, user_id, handle)
);

CREATE INDEX tasks_open ON tasks (next_poll, id) WHERE finished_at IS NULL;
CREATE INDEX tasks_chat ON tasks (chat_id, id) WHERE finished_at IS NULL;
CREATE INDEX tasks_finished ON tasks (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX tasks_undelivered ON tasks (finished_at, id) WHERE finished_at IS NOT NULL AND delivered_at IS NULL;
