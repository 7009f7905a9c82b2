-- What /stats reads beside the audit log (tool_calls) and token_usage:
-- one row per turn, with how it ended and the model calls it made (as
-- SQLite's 0008). Rows older than the retention are deleted by a periodic
-- sweep (DB.PruneStats).
CREATE TABLE turns (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    turn_id      text   NOT NULL,
    user_id      text   NOT NULL,
    chat_id      text   NOT NULL,
    outcome      text   NOT NULL,
    kind         text   NOT NULL,
    model        text   NOT NULL,
    calls        bigint NOT NULL,
    failures     text   NOT NULL,
    durations_ms text   NOT NULL,
    in_tokens    bigint NOT NULL,
    out_tokens   bigint NOT NULL,
    first_try    bigint NOT NULL,
    repaired     bigint NOT NULL,
    fed_back     bigint NOT NULL,
    created_at   bigint NOT NULL
);

CREATE INDEX turns_created ON turns (created_at);

CREATE INDEX tool_calls_created ON tool_calls (created_at);
