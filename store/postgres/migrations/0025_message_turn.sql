-- The turn whose request a user message is (turn_id; '' for the rest): a
-- turn started by a Telegram update carries an id drawn from the
-- update's, so that the update run again after a crash finds what its
-- turn stored already and carries on from there, instead of running
-- the request a second time.
ALTER TABLE messages ADD COLUMN turn_id text NOT NULL DEFAULT '';
