-- The MCP servers a chat turned off for itself, as a JSON array of names
-- (as SQLite's 0007).
ALTER TABLE chat_settings ADD COLUMN servers_off text NOT NULL DEFAULT '[]';
