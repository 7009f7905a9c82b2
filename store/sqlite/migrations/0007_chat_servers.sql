-- The MCP servers a chat turned off for itself, as a JSON array of names;
-- the operator's own switch (/servers) is the settings file.
ALTER TABLE chat_settings ADD COLUMN servers_off TEXT NOT NULL DEFAULT '[]';
