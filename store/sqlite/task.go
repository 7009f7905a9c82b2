package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const (
	taskColumns = `id, server, handle, tool, chat_id, user_id, turn_id, call_id, reply_to, card_id,
		status, status_message, next_poll, deadline, created_at, finished_at, outcome, delivered_at, owner, lease_until`
	insertTaskSQL = `INSERT INTO tasks (server, handle, tool, chat_id, user_id, turn_id, call_id, reply_to, card_id,
		status, status_message, next_poll, deadline, created_at, owner, lease_until)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (server, user_id, handle) DO NOTHING`
	taskIDSQL     = `SELECT id FROM tasks WHERE server = ? AND user_id = ? AND handle = ?`
	taskExistsSQL = `SELECT finished_at IS NULL FROM tasks WHERE id = ?`
)

func scanTask(s scanner) (store.Task, error) {
	var t store.Task
	var next, deadline, created, lease int64
	var finished, delivered sql.NullInt64
	if err := s.Scan(&t.ID, &t.Server, &t.Handle, &t.Tool, &t.ChatID, &t.UserID, &t.TurnID, &t.CallID, &t.ReplyTo, &t.CardID,
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
	if finished.Valid {
		t.FinishedAt = fromMillis(finished.Int64)
	}
	if delivered.Valid {
		t.DeliveredAt = fromMillis(delivered.Int64)
	}
	return t, nil
}

// PutTask stores t, open, unless its server, user and handle are stored
// already, and returns its id.
func (db *DB) PutTask(ctx context.Context, t store.Task) (int64, error) {
	created := t.CreatedAt
	if created.IsZero() {
		created = db.now()
	}
	var deadline int64
	if !t.Deadline.IsZero() {
		deadline = millis(t.Deadline)
	}
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, insertTaskSQL, t.Server, t.Handle, t.Tool, t.ChatID, t.UserID, t.TurnID, t.CallID,
			t.ReplyTo, t.CardID, t.Status, t.StatusMessage, millis(t.NextPoll), deadline, millis(created),
			t.Owner, tables.LeaseMillis(t)); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, taskIDSQL, t.Server, t.UserID, t.Handle).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("put task %q of %q: %w", t.Handle, t.Server, err)
	}
	return id, nil
}

// GetTask returns the task with the given id, or store.ErrNotFound.
func (db *DB) GetTask(ctx context.Context, id int64) (store.Task, error) {
	t, err := scanTask(db.reader.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if err != nil {
		return store.Task{}, fmt.Errorf("get task %d: %w", id, notFound(err))
	}
	return t, nil
}

// OpenTasks returns the open tasks, soonest next poll first.
func (db *DB) OpenTasks(ctx context.Context, limit int) ([]store.Task, error) {
	if limit <= 0 {
		limit = -1
	}
	ts, err := db.tasks(ctx, `SELECT `+taskColumns+` FROM tasks WHERE finished_at IS NULL ORDER BY next_poll, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list open tasks: %w", err)
	}
	return ts, nil
}

// ChatTasks returns the open tasks of the conversation key, oldest first.
func (db *DB) ChatTasks(ctx context.Context, key string) ([]store.Task, error) {
	ts, err := db.tasks(ctx, `SELECT `+taskColumns+` FROM tasks WHERE chat_id = ? AND finished_at IS NULL ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("list tasks of chat %q: %w", key, err)
	}
	return ts, nil
}

func (db *DB) tasks(ctx context.Context, query string, args ...any) ([]store.Task, error) {
	return scanTasks(db.reader.QueryContext(ctx, query, args...))
}

// scanTasks reads the tasks of rows, and closes them.
func scanTasks(rows *sql.Rows, err error) ([]store.Task, error) {
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var ts []store.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// UndeliveredTasks returns the finished tasks not delivered, soonest
// finished first.
func (db *DB) UndeliveredTasks(ctx context.Context) ([]store.Task, error) {
	ts, err := db.tasks(ctx, `SELECT `+taskColumns+` FROM tasks WHERE finished_at IS NOT NULL AND delivered_at IS NULL ORDER BY finished_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list undelivered tasks: %w", err)
	}
	return ts, nil
}

// deliverTask marks task id delivered in tx, if it is finished and was
// not: ErrResolved if it is open or delivered, ErrNotFound if unknown.
func (db *DB) deliverTask(ctx context.Context, tx *sql.Tx, id int64, now time.Time) error {
	res, err := tx.ExecContext(ctx, `UPDATE tasks SET delivered_at = ?
		WHERE id = ? AND finished_at IS NOT NULL AND delivered_at IS NULL`, millis(now), id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var open bool
	if err := tx.QueryRowContext(ctx, taskExistsSQL, id).Scan(&open); errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("deliver task %d: %w", id, store.ErrNotFound)
	}
	return fmt.Errorf("deliver task %d: %w", id, store.ErrResolved)
}

// UpdateTask stores a new status, message and next poll of an open task.
func (db *DB) UpdateTask(ctx context.Context, id int64, status, message string, nextPoll time.Time) error {
	err := db.openTaskWrite(ctx, id, `UPDATE tasks SET status = ?, status_message = ?, next_poll = ?
		WHERE id = ? AND finished_at IS NULL`, status, message, millis(nextPoll), id)
	if err != nil {
		return fmt.Errorf("update task %d: %w", id, err)
	}
	return nil
}

// SetTaskCard stores the message that shows the task.
func (db *DB) SetTaskCard(ctx context.Context, id, cardID int64) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tasks SET card_id = ? WHERE id = ?`, cardID, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set card of task %d: %w", id, err)
	}
	return nil
}

// FinishTask closes an open task with its final status and outcome, once.
func (db *DB) FinishTask(ctx context.Context, id int64, status, message string, outcome []byte) error {
	if outcome == nil {
		outcome = []byte{}
	}
	err := db.openTaskWrite(ctx, id, `UPDATE tasks SET status = ?, status_message = ?, outcome = ?, finished_at = ?
		WHERE id = ? AND finished_at IS NULL`, status, message, outcome, millis(db.now()), id)
	if err != nil {
		return fmt.Errorf("finish task %d as %q: %w", id, status, err)
	}
	return nil
}

// openTaskWrite runs an update of the open task id: ErrResolved if it is
// finished, ErrNotFound if there is none.
func (db *DB) openTaskWrite(ctx context.Context, id int64, query string, args ...any) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var open bool
		err = tx.QueryRowContext(ctx, taskExistsSQL, id).Scan(&open)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return store.ErrNotFound
		case err != nil:
			return err
		}
		return store.ErrResolved
	})
}

// PruneTasks deletes the tasks finished before the given time.
func (db *DB) PruneTasks(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE finished_at IS NOT NULL AND finished_at < ?`, millis(before))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune tasks: %w", err)
	}
	return n, nil
}
