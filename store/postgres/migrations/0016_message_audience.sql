-- In a group, what a tool that acts per user found for one member, and
-- what the model made of it, is read as written by that member's turns
-- only (only_for, a user id; '' for everyone). The other members read
-- shared in its place, or nothing when it is '' (as SQLite's 0015).
ALTER TABLE messages ADD COLUMN only_for text NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN shared text NOT NULL DEFAULT '';
