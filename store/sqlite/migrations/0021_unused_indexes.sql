-- Indexes no statement reads, each a page written by every commit that
-- adds a row to its table:
--
-- A conversation's messages are read, counted and replaced through
-- messages_history alone (0013): its rows are those not replaced, in the
-- order of their ids, which is every read there is. messages_conversation
-- served none of them any more, and was written with each of a turn's
-- commits.
DROP INDEX messages_conversation;

-- token_usage is read by user (its key) for a budget and /usage; no total
-- over a period is read by day, and the index was written with each turn's
-- last commit.
DROP INDEX token_usage_day;
