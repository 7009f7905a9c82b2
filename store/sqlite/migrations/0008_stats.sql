-- What /stats reads beside the audit log (tool_calls) and token_usage:
-- one row per turn, with how it ended and the model calls it made. One
-- row, written with the turn's last write where it has one, keeps the cost
-- of the statistics to a row per turn; rows older than the retention (30
-- days by default, see DB.PruneStats) are deleted by a periodic sweep, so
-- the table stays the size of a month's traffic. Times are UTC Unix
-- milliseconds.
--
-- outcome: answer, question, approval, error, limit, cancelled, budget;
-- kind narrows an error (the model's failure kind, format, busy,
-- internal), "" otherwise. The model columns sum the turn's calls:
-- failures lists the failure kind of each failed call and durations_ms the
-- duration of each call not cancelled, separated by spaces; first_try,
-- repaired and fed_back count the tool blocks the bot acted on by how
-- their format fared; the tokens are the calls' own (token_usage keeps the
-- per-day sums for budgets).
CREATE TABLE turns (
    id           INTEGER PRIMARY KEY,
    turn_id      TEXT    NOT NULL,
    user_id      TEXT    NOT NULL,
    chat_id      TEXT    NOT NULL,
    outcome      TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    calls        INTEGER NOT NULL,
    failures     TEXT    NOT NULL,
    durations_ms TEXT    NOT NULL,
    in_tokens    INTEGER NOT NULL,
    out_tokens   INTEGER NOT NULL,
    first_try    INTEGER NOT NULL,
    repaired     INTEGER NOT NULL,
    fed_back     INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX turns_created ON turns (created_at);

-- /stats reads the audit log by time too.
CREATE INDEX tool_calls_created ON tool_calls (created_at);
