-- The searches for tools of a turn, for /stats (as SQLite's 0014).
ALTER TABLE turns ADD COLUMN searches integer NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN searches_empty integer NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN searches_followed integer NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN search_found text NOT NULL DEFAULT '';
