-- What /stats reads beside the audit log (tool_calls) and token_usage:
-- how each turn ended, and each model call. One row per turn and per
-- model call; rows older than the retention (30 days by default, see
-- DB.PruneStats) are deleted by a periodic sweep, so the tables stay
-- the size of a month's traffic. Times are UTC Unix milliseconds.

-- outcome: answer, question, approval, error, limit, cancelled, budget;
-- kind narrows an error (the model's failure kind, format, busy,
-- internal), "" otherwise.
CREATE TABLE turns (
    id         INTEGER PRIMARY KEY,
    turn_id    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    chat_id    TEXT    NOT NULL,
    outcome    TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX turns_created ON turns (created_at);

-- outcome: ok, cancelled, or the failure kind after retries. The tokens
-- are the call's own (token_usage keeps the per-day sums for budgets);
-- first_try, repaired and fed_back count the tool blocks of the reply the
-- bot acted on, by how their format fared.
CREATE TABLE model_calls (
    id             INTEGER PRIMARY KEY,
    user_id        TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    outcome        TEXT    NOT NULL,
    duration_ms    INTEGER NOT NULL,
    first_token_ms INTEGER NOT NULL,
    in_tokens      INTEGER NOT NULL,
    out_tokens     INTEGER NOT NULL,
    first_try      INTEGER NOT NULL,
    repaired       INTEGER NOT NULL,
    fed_back       INTEGER NOT NULL,
    created_at     INTEGER NOT NULL
) STRICT;

CREATE INDEX model_calls_created ON model_calls (created_at);

-- /stats reads the audit log by time too.
CREATE INDEX tool_calls_created ON tool_calls (created_at);
