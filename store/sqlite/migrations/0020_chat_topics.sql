-- How a forum (a group with topics) keeps its conversations: '' gives
-- each topic a conversation of its own, 'shared' one conversation for the
-- whole group (/topics). Set on the group's own row, never a topic's.
ALTER TABLE chat_settings ADD COLUMN topics TEXT NOT NULL DEFAULT '';
