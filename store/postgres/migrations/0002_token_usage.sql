-- Tokens the model read (in) and wrote (out) for each user, per UTC day
-- (YYYY-MM-DD text, so a month is a range of it) and model, as in
-- SQLite's 0002. The est_ columns are the part of in and out that was
-- estimated because the provider reported no usage.
CREATE TABLE token_usage (
    user_id    text   NOT NULL,
    day        text   NOT NULL,
    model      text   NOT NULL,
    calls      bigint NOT NULL DEFAULT 0,
    in_tokens  bigint NOT NULL DEFAULT 0,
    out_tokens bigint NOT NULL DEFAULT 0,
    est_in     bigint NOT NULL DEFAULT 0,
    est_out    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, day, model)
);

-- Totals over a period (/stats) read by day.
CREATE INDEX token_usage_day ON token_usage (day);
