-- As SQLite's 0021, indexes no statement reads, each written with every
-- row added to its table: a conversation's messages are read, counted and
-- replaced through messages_history alone (0014), whose rows are those not
-- replaced, in the order of their ids; token_usage is read by user, its
-- key, and never by day.
DROP INDEX messages_conversation;
DROP INDEX token_usage_day;
