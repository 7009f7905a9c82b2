-- The model profile a chat chose with /model; '' is the operator's
-- default (as SQLite's 0009).
ALTER TABLE chat_settings ADD COLUMN model text NOT NULL DEFAULT '';
