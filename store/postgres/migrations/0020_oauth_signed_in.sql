-- When a grant was made: a sign-in (PutOAuthGrant) sets it, a refresh
-- (UpdateOAuthGrant) does not, so /connections can say since when a
-- server is connected. Grants made before this column take the time of
-- their last write.
ALTER TABLE oauth_grants ADD COLUMN signed_in_at bigint NOT NULL DEFAULT 0;
UPDATE oauth_grants SET signed_in_at = updated_at;
