-- Tokens the model read (in) and wrote (out) for each user, per UTC day
-- (YYYY-MM-DD, so a month is a range of the text) and model. The est_
-- columns are the part of in and out that was estimated because the
-- provider reported no usage. One row per user, day and model keeps the
-- table small: a budget check reads one day, /usage one month.
CREATE TABLE token_usage (
    user_id    TEXT    NOT NULL,
    day        TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    calls      INTEGER NOT NULL DEFAULT 0,
    in_tokens  INTEGER NOT NULL DEFAULT 0,
    out_tokens INTEGER NOT NULL DEFAULT 0,
    est_in     INTEGER NOT NULL DEFAULT 0,
    est_out    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day, model)
) STRICT, WITHOUT ROWID;

-- Totals over a period (/stats) read by day.
CREATE INDEX token_usage_day ON token_usage (day);
