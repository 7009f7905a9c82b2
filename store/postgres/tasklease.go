package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// Task leases (see store.Tasks): an open task's owner and when its lease
// lapses are two columns of its row, so that a claim is one UPDATE and a
// renewal one UPDATE of every task an instance polls, whatever their
// number. Times are the callers' clocks: instances whose clocks disagree
// by more than a lease may take each other's tasks early, which costs a
// poll twice over, never an outcome twice (FinishTask decides).
const (
	// claimTasksSQL takes the lapsed and the long unowned open tasks,
	// passing over those another transaction holds (SKIP LOCKED): of two
	// instances claiming at once, each takes what the other did not.
	claimTasksSQL = `UPDATE tasks SET owner = $1, lease_until = $4 WHERE id IN (
		SELECT id FROM tasks WHERE finished_at IS NULL AND lease_until <= $2 AND (owner <> '' OR created_at <= $3)
		FOR UPDATE SKIP LOCKED) RETURNING ` + taskColumns

	// claimTaskSQL takes one open task that is unowned, the caller's, or
	// lapsed.
	claimTaskSQL = `UPDATE tasks SET owner = $2, lease_until = $4
		WHERE id = $1 AND finished_at IS NULL AND (owner IN ('', $2) OR lease_until <= $3) RETURNING ` + taskColumns

	renewTasksSQL = `UPDATE tasks SET lease_until = $3 WHERE owner = $1 AND id = ANY($2) AND finished_at IS NULL`
)

// ClaimTask takes the open task id for owner until until, unless another
// owner's lease runs past now (store.ErrLeased).
func (db *DB) ClaimTask(ctx context.Context, id int64, owner string, now, until time.Time) (store.Task, error) {
	ts, err := collectAs(ctx, db, idempotent, claimTaskSQL, []any{id, text(owner), millis(now), millis(until)}, scanTask)
	return tables.ClaimedOne(ctx, id, ts, err, db.GetTask)
}

// ClaimTasks takes for owner the open tasks whose lease lapsed, and those
// of no owner stored at or before unowned. Once: run again after it went
// in, it would find the tasks taken, and return none of them; they would
// lapse again, and be taken then.
func (db *DB) ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]store.Task, error) {
	ts, err := collectAs(ctx, db, once, claimTasksSQL, []any{text(owner), millis(lapsed), millis(unowned), millis(until)}, scanTask)
	return tables.Claimed(owner, ts, err)
}

// RenewTasks extends owner's leases on the open tasks of ids, in one
// statement.
func (db *DB) RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := db.exec(ctx, idempotent, renewTasksSQL, text(owner), ids, millis(until))
	if err != nil {
		return 0, fmt.Errorf("renew the task leases of %q: %w", owner, err)
	}
	return tag.RowsAffected(), nil
}
