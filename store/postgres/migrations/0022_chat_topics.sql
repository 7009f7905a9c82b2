-- How a forum (a group with topics) keeps its conversations: '' gives
-- each topic a conversation of its own, 'shared' one conversation for the
-- whole group (/topics), as in SQLite's 0020.
ALTER TABLE chat_settings ADD COLUMN topics text NOT NULL DEFAULT '';
