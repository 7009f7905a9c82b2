-- Memories belong to one user; (user_id, key) names a memory.
CREATE TABLE memories (
	id         INTEGER PRIMARY KEY,
	user_id    TEXT NOT NULL,
	key        TEXT NOT NULL,
	content    TEXT NOT NULL,
	tags       TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
	created_at TEXT NOT NULL,               -- RFC 3339, UTC
	updated_at TEXT NOT NULL,
	UNIQUE (user_id, key)
);

CREATE INDEX memories_by_user_updated ON memories (user_id, updated_at DESC);

-- External-content index: the text lives once, in memories; the triggers keep
-- the index in step inside the writing transaction.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
	content,
	tags,
	content = 'memories',
	content_rowid = 'id',
	tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_after_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts (rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;

CREATE TRIGGER memories_after_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
END;

CREATE TRIGGER memories_after_update AFTER UPDATE ON memories BEGIN
	INSERT INTO memories_fts (memories_fts, rowid, content, tags) VALUES ('delete', old.id, old.content, old.tags);
	INSERT INTO memories_fts (rowid, content, tags) VALUES (new.id, new.content, new.tags);
END;
