-- Rates that several instances share: the per-user message limit and the
-- bot's pace of sent messages. Each row is a generic cell rate algorithm
-- cell: tat (the theoretical arrival time, microseconds of the database's
-- clock) is when the key's allowance would be whole again; refusals counts
-- the refusals in a row since the last allowed event. A row whose tat has
-- passed says nothing an absent row does not, so old rows may be deleted.
CREATE TABLE rate_limits (
    key      text   PRIMARY KEY,
    tat      bigint NOT NULL,
    refusals bigint NOT NULL DEFAULT 0
);
