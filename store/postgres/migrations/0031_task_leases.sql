-- Who polls each open task: owner is the instance's id ('' for none yet)
-- and lease_until (milliseconds; 0 for none) when its claim lapses unless
-- renewed, after which another instance may take the task over.
ALTER TABLE tasks ADD COLUMN owner text NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN lease_until bigint NOT NULL DEFAULT 0;

CREATE INDEX tasks_lease ON tasks (lease_until) WHERE finished_at IS NULL;
