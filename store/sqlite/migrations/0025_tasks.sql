-- The tool calls their MCP servers run in the background (MCP Tasks): the
-- server's handle of each, with whom and what it was for, kept so that
-- polling resumes after a restart and the outcome reaches the chat once.
-- finished_at is NULL while the task is open, delivered_at until the turn
-- that hands its outcome to the conversation stored it; next_poll is
-- written with a change of status, not at every poll. deadline 0: none.
CREATE TABLE tasks (
    id             INTEGER PRIMARY KEY,
    server         TEXT    NOT NULL,
    handle         TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    chat_id        TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    turn_id        TEXT    NOT NULL,
    call_id        TEXT    NOT NULL,
    reply_to       INTEGER NOT NULL,
    card_id        INTEGER NOT NULL DEFAULT 0,
    status         TEXT    NOT NULL,
    status_message TEXT    NOT NULL,
    next_poll      INTEGER NOT NULL,
    deadline       INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    finished_at    INTEGER,
    delivered_at   INTEGER,
    outcome        BLOB,
    UNIQUE (server, user_id, handle)
) STRICT;

CREATE INDEX tasks_open ON tasks (next_poll, id) WHERE finished_at IS NULL;
CREATE INDEX tasks_chat ON tasks (chat_id, id) WHERE finished_at IS NULL;
CREATE INDEX tasks_finished ON tasks (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX tasks_undelivered ON tasks (finished_at, id) WHERE finished_at IS NOT NULL AND delivered_at IS NULL;
