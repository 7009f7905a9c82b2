-- A conversation's messages are read, counted and replaced through
-- messages_history alone (0013): its rows are those not replaced, in the
-- order of their ids, which is every read there is. messages_conversation
-- served none of them any more, and cost a page written with every turn's
-- every commit.
DROP INDEX messages_conversation;
