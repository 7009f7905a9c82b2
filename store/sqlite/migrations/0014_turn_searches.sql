-- The searches for tools of a turn (search_tools), for /stats: how many,
-- how many found nothing, how many were followed by a call of a tool they
-- found; search_found lists every tool found as JSON, [server, tool,
-- called] (called 1 when the model then called it), "" when none.
ALTER TABLE turns ADD COLUMN searches INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN searches_empty INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN searches_followed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN search_found TEXT NOT NULL DEFAULT '';
