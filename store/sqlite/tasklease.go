package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

// Task leases (see store.Tasks): the same two columns as PostgreSQL's,
// written by the one writer. A SQLite file has one instance, whose
// poller takes every open task at its start whatever their leases say
// (see tasks.Options.Shared), so leases here matter between the
// processes of a restart only.
const (
	claimTasksSQL = `UPDATE tasks SET owner = ?, lease_until = ? WHERE id IN (
		SELECT id FROM tasks WHERE finished_at IS NULL AND lease_until <= ? AND (owner <> '' OR created_at <= ?))
		RETURNING ` + taskColumns
	claimTaskSQL = `UPDATE tasks SET owner = ?, lease_until = ?
		WHERE id = ? AND finished_at IS NULL AND (owner IN ('', ?) OR lease_until <= ?) RETURNING ` + taskColumns
	// renewTasksSQL reads the ids from one JSON array, so that a
	// thousand of them are still one statement.
	renewTasksSQL = `UPDATE tasks SET lease_until = ?
		WHERE owner = ? AND id IN (SELECT value FROM json_each(?)) AND finished_at IS NULL`
)

// ClaimTask takes the open task id for owner until until, unless another
// owner's lease runs past now (store.ErrLeased).
func (db *DB) ClaimTask(ctx context.Context, id int64, owner string, now, until time.Time) (store.Task, error) {
	ts, err := db.claim(ctx, claimTaskSQL, owner, millis(until), id, owner, millis(now))
	return tables.ClaimedOne(ctx, id, ts, err, db.GetTask)
}

// ClaimTasks takes for owner the open tasks whose lease lapsed, and those
// of no owner stored at or before unowned.
func (db *DB) ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]store.Task, error) {
	ts, err := db.claim(ctx, claimTasksSQL, owner, millis(until), millis(lapsed), millis(unowned))
	return tables.Claimed(owner, ts, err)
}

// claim runs a claim that returns the tasks it took, in one write.
func (db *DB) claim(ctx context.Context, query string, args ...any) ([]store.Task, error) {
	var ts []store.Task
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		ts, err = scanTasks(tx.QueryContext(ctx, query, args...))
		return err
	})
	return ts, err
}

// RenewTasks extends owner's leases on the open tasks of ids, in one
// statement.
func (db *DB) RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	list, _ := json.Marshal(ids) // numbers only: it cannot fail
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, renewTasksSQL, millis(until), owner, string(list))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("renew the task leases of %q: %w", owner, err)
	}
	return n, nil
}
