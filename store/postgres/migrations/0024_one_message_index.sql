-- As SQLite's 0021: a conversation's messages are read, counted and
-- replaced through messages_history alone (0014), whose rows are those not
-- replaced, in the order of their ids; messages_conversation served no
-- read any more, and cost an index entry with every message written.
DROP INDEX messages_conversation;
