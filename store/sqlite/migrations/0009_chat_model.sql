-- The model profile a chat chose with /model; '' is the operator's
-- default. A name, not a reference: a profile is configuration, and one
-- removed from it leaves the chat on the default (the agent says so).
ALTER TABLE chat_settings ADD COLUMN model TEXT NOT NULL DEFAULT '';
