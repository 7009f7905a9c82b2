-- /retry answers the last message again: what the earlier answer was
-- stays, marked replaced, and the model no longer reads it.
ALTER TABLE messages ADD COLUMN replaced_at INTEGER;
