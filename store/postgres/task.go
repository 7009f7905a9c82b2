package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const taskColumns = `id, server, handle, tool, chat_id, user_id, turn_id, call_id, reply_to, card_id,
	status, status_message, next_poll, deadline, created_at, finished_at, outcome, delivered_at, owner, lease_until`

func scanTask(row pgx.CollectableRow) (store.Task, error) {
	var t store.Task
	var next, deadline, created, lease int64
	var finished, delivered *int64
	if err := row.Scan(&t.ID, &t.Server, &t.Handle, &t.Tool, &t.ChatID, &t.UserID, &t.TurnID, &t.CallID, &t.ReplyTo, &t.CardID,
		&t.Status, &t.StatusMessage, &next, &deadline, &created, &finished, &t.Outcome, &delivered, &t.Owner, &lease); err != nil {
		return store.Task{}, err
	}
	t.NextPoll, t.CreatedAt = fromMillis(next), fromMillis(created)
	if deadline != 0 {
		t.Deadline = fromMillis(deadline)
	}
	if lease != 0 {
		t.LeaseUntil = fromMillis(lease)
	}
	t.FinishedAt, t.DeliveredAt = fromNullMillis(finished), fromNullMillis(delivered)
	return t, nil
}

// PutTask stores t, open, unless its server, user and handle are stored
// already, and returns its id. Run twice it returns the same id.
func (db *DB) PutTask(ctx context.Context, t store.Task) (int64, error) {
	created := t.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	var deadline int64
	if !t.Deadline.IsZero() {
		deadline = millis(t.Deadline)
	}
	var id int64
	err := db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO tasks (server, handle, tool, chat_id, user_id, turn_id, call_id, reply_to, card_id,
			status, status_message, next_poll, deadline, created_at, owner, lease_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
			ON CONFLICT (server, user_id, handle) DO NOTHING`,
			text(t.Server), text(t.Handle), text(t.Tool), text(t.ChatID), text(t.UserID), text(t.TurnID), text(t.CallID),
			t.ReplyTo, t.CardID, text(t.Status), text(t.StatusMessage), millis(t.NextPoll), deadline, millis(created),
			text(t.Owner), tables.LeaseMillis(t)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT id FROM tasks WHERE server = $1 AND user_id = $2 AND handle = $3`,
			text(t.Server), text(t.UserID), text(t.Handle)).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("put task %q of %q: %w", t.Handle, t.Server, err)
	}
	return id, nil
}

// GetTask returns the task with the given id, or store.ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id int64) (store.Task, error) {
	ts, err := collect(ctx, db, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`, []any{id}, scanTask)
	if err == nil && len(ts) == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Task{}, fmt.Errorf("get task %d: %w", id, err)
	}
	return ts[0], nil
}

// OpenTasks returns the open tasks, soonest next poll first.
func (db *DB) OpenTasks(ctx context.Context, limit int) ([]store.Task, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	ts, err := collect(ctx, db, `SELECT `+taskColumns+` FROM tasks WHERE finished_at IS NULL ORDER BY next_poll, id LIMIT $1`, []any{lim}, scanTask)
	if err != nil {
		return nil, fmt.Errorf("list open tasks: %w", err)
	}
	return nilIfEmpty(ts), nil
}

// ChatTasks returns the open tasks of the conversation key, oldest first.
func (db *DB) ChatTasks(ctx context.Context, key string) ([]store.Task, error) {
	ts, err := collect(ctx, db, `SELECT `+taskColumns+` FROM tasks WHERE chat_id = $1 AND finished_at IS NULL ORDER BY id`, []any{text(key)}, scanTask)
	if err != nil {
		return nil, fmt.Errorf("list tasks of chat %q: %w", key, err)
	}
	return nilIfEmpty(ts), nil
}

// UndeliveredTasks returns the finished tasks not delivered, soonest
// finished first.
func (db *DB) UndeliveredTasks(ctx context.Context) ([]store.Task, error) {
	ts, err := collect(ctx, db, `SELECT `+taskColumns+` FROM tasks WHERE finished_at IS NOT NULL AND delivered_at IS NULL ORDER BY finished_at, id`, nil, scanTask)
	if err != nil {
		return nil, fmt.Errorf("list undelivered tasks: %w", err)
	}
	return nilIfEmpty(ts), nil
}

// deliverTask marks task id delivered in tx, if it is finished and was
// not: ErrResolved if it is open or delivered, ErrNotFound if unknown.
func deliverTask(ctx context.Context, tx pgx.Tx, id int64, now time.Time) error {
	var changed int
	var exists bool
	err := tx.QueryRow(ctx, `WITH done AS (
			UPDATE tasks SET delivered_at = $2 WHERE id = $1 AND finished_at IS NOT NULL AND delivered_at IS NULL RETURNING 1)
		SELECT (SELECT count(*) FROM done), EXISTS (SELECT 1 FROM tasks WHERE id = $1)`, id, millis(now)).Scan(&changed, &exists)
	switch {
	case err != nil:
		return err
	case changed == 1:
		return nil
	case exists:
		return fmt.Errorf("deliver task %d: %w", id, store.ErrResolved)
	}
	return fmt.Errorf("deliver task %d: %w", id, store.ErrNotFound)
}

func nilIfEmpty(ts []store.Task) []store.Task {
	if len(ts) == 0 {
		return nil
	}
	return ts
}

// UpdateTask stores a new status, message and next poll of an open task.
// Run twice it leaves what it left run once.
func (db *DB) UpdateTask(ctx context.Context, id int64, status, message string, nextPoll time.Time) error {
	err := db.openTaskWrite(ctx, idempotent, id, `UPDATE tasks SET status = $2, status_message = $3, next_poll = $4
		WHERE id = $1 AND finished_at IS NULL RETURNING 1`, text(status), text(message), millis(nextPoll))
	if err != nil {
		return fmt.Errorf("update task %d: %w", id, err)
	}
	return nil
}

// SetTaskCard stores the message that shows the task.
func (db *DB) SetTaskCard(ctx context.Context, id, cardID int64) error {
	tag, err := db.exec(ctx, idempotent, `UPDATE tasks SET card_id = $2 WHERE id = $1`, id, cardID)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set card of task %d: %w", id, err)
	}
	return nil
}

// FinishTask closes an open task with its final status and outcome, once.
// Once: run again after it went in, it would find the task finished and
// take its own finish for someone else's.
func (db *DB) FinishTask(ctx context.Context, id int64, status, message string, outcome []byte) error {
	if outcome == nil {
		outcome = []byte{}
	}
	err := db.openTaskWrite(ctx, once, id, `UPDATE tasks SET status = $2, status_message = $3, outcome = $4, finished_at = $5
		WHERE id = $1 AND finished_at IS NULL RETURNING 1`, text(status), text(message), outcome, millis(time.Now()))
	if err != nil {
		return fmt.Errorf("finish task %d as %q: %w", id, status, err)
	}
	return nil
}

// openTaskWrite runs update, which returns a row if it changed the open
// task id, as effect e: ErrResolved if the task is finished, ErrNotFound
// if there is none.
func (db *DB) openTaskWrite(ctx context.Context, e effect, id int64, update string, args ...any) error {
	var changed int
	var exists bool
	err := db.do(ctx, e, func(int) error {
		return db.pool.QueryRow(ctx, `WITH done AS (`+update+`)
			SELECT (SELECT count(*) FROM done), EXISTS (SELECT 1 FROM tasks WHERE id = $1)`,
			append([]any{id}, args...)...).Scan(&changed, &exists)
	})
	switch {
	case err != nil:
		return err
	case changed == 1:
		return nil
	case exists:
		return store.ErrResolved
	}
	return store.ErrNotFound
}

// PruneTasks deletes the tasks finished before the given time.
func (db *DB) PruneTasks(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.exec(ctx, idempotent, `DELETE FROM tasks WHERE finished_at IS NOT NULL AND finished_at < $1`, millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune tasks: %w", err)
	}
	return tag.RowsAffected(), nil
}
