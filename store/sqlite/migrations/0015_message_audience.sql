-- In a group, what a tool that acts per user found for one member, and
-- what the model made of it, is read as written by that member's turns
-- only (only_for, a user id; '' for everyone). The other members read
-- shared in its place (the answer as the group saw it), or nothing when
-- it is ''.
ALTER TABLE messages ADD COLUMN only_for TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN shared TEXT NOT NULL DEFAULT '';
