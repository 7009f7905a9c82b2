package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const (
	insertInboxSQL = `INSERT INTO inbox (update_id, chat_id, payload, received_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (update_id) DO NOTHING`
	inboxQueuedSQL = `SELECT update_id, chat_id, payload, received_at
		FROM inbox WHERE processed_at IS NULL AND update_id > ? ORDER BY update_id LIMIT ?`
	markInboxSQL = `UPDATE inbox SET processed_at = ?, payload = x''
		WHERE update_id = ? AND processed_at IS NULL`
	inboxExistsSQL = `SELECT 1 FROM inbox WHERE update_id = ?`
)

// InboxPut stores items in one transaction, skipping update ids already in
// the inbox (processed or not), so a batch Telegram sends again is harmless.
//
// The commit is durable even against power loss (synchronous=FULL): the
// poller advances its getUpdates offset once InboxPut returns, after which
// Telegram will not send the updates again, so this row is the only copy.
// Only the inbox pays for that fsync; messages and the audit log stay at
// NORMAL, which survives a crash of the process, and the next FULL commit
// flushes them too, since it syncs the whole WAL.
//
// It goes ahead of the writes waiting for the writer: until it returns, the
// poller fetches no new updates.
func (db *DB) InboxPut(ctx context.Context, items ...store.InboxItem) error {
	if len(items) == 0 {
		return nil
	}
	now := db.now()
	err := db.writeFull(ctx, true, func(tx *sql.Tx) error {
		stmt, err := db.txStmt(ctx, tx, insertInboxSQL)
		if err != nil {
			return err
		}
		defer func() { _ = stmt.Close() }()
		for _, it := range items {
			at := it.ReceivedAt
			if at.IsZero() {
				at = now
			}
			payload := it.Payload
			if payload == nil {
				payload = []byte{} // NOT NULL; a nil slice binds as NULL
			}
			if _, err := stmt.ExecContext(ctx, it.UpdateID, it.ChatID, payload, millis(at)); err != nil {
				return fmt.Errorf("update %d: %w", it.UpdateID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put %d updates in inbox: %w", len(items), err)
	}
	return nil
}

// InboxQueued returns up to limit queued items with an update
// id above afterID, in update_id order; limit <= 0 returns all. A reader
// that has handed out every item up to afterID pages on with it, so a
// backlog of items still being handled does not hide newer ones.
func (db *DB) InboxQueued(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error) {
	items, err := db.inboxQueued(ctx, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list queued updates after %d: %w", afterID, err)
	}
	return items, nil
}

// InboxQueuedChat returns up to limit queued items of one chat, in
// update_id order; limit <= 0 returns all. The bot gathers an album's
// updates with it.
func (db *DB) InboxQueuedChat(ctx context.Context, chatID string, limit int) ([]store.InboxItem, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT update_id, chat_id, payload, received_at
		FROM inbox WHERE processed_at IS NULL AND chat_id = ? ORDER BY update_id LIMIT ?`, chatID, limit)
	if err != nil {
		return nil, fmt.Errorf("list queued updates of chat %q: %w", chatID, err)
	}
	items, err := scanInbox(rows)
	if err != nil {
		return nil, fmt.Errorf("list queued updates of chat %q: %w", chatID, err)
	}
	return items, nil
}

func (db *DB) inboxQueued(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := db.readRows(ctx, inboxQueuedSQL, afterID, limit)
	if err != nil {
		return nil, err
	}
	return scanInbox(rows)
}

// scanInbox reads rows of update_id, chat_id, payload and received_at,
// and closes them.
func scanInbox(rows *sql.Rows) ([]store.InboxItem, error) {
	defer func() { _ = rows.Close() }()
	var items []store.InboxItem
	for rows.Next() {
		var it store.InboxItem
		var at int64
		if err := rows.Scan(&it.UpdateID, &it.ChatID, &it.Payload, &at); err != nil {
			return nil, err
		}
		it.ReceivedAt = fromMillis(at)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// InboxDone marks updates as processed, and forgets their payloads, all
// in one transaction. Marking one again is a no-op. Unknown update ids give an error wrapping
// store.ErrNotFound that names them; the known ones are marked all the same.
//
// It commits with synchronous=FULL like InboxPut: a "done" lost to a power
// cut would have the update handled, and answered, a second time. Marking
// many updates at once costs one fsync instead of one each.
func (db *DB) InboxDone(ctx context.Context, updateIDs ...int64) error {
	if len(updateIDs) == 0 {
		return nil
	}
	var unknown []int64
	err := db.writeFull(ctx, false, func(tx *sql.Tx) error {
		unknown = unknown[:0] // writeFull does not retry, but stay correct if it did
		mark, err := db.txStmt(ctx, tx, markInboxSQL)
		if err != nil {
			return err
		}
		defer func() { _ = mark.Close() }()
		now := millis(db.now())
		for _, id := range updateIDs {
			res, err := mark.ExecContext(ctx, now, id)
			if err != nil {
				return fmt.Errorf("update %d: %w", id, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("update %d: %w", id, err)
			}
			if n == 1 {
				continue
			}
			var one int
			err = db.txRow(ctx, tx, inboxExistsSQL, id).Scan(&one)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				unknown = append(unknown, id)
			case err != nil:
				return fmt.Errorf("update %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark %s done: %w", store.DescribeUpdates(updateIDs), err)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("mark %s done: %w", store.DescribeUpdates(unknown), store.ErrNotFound)
	}
	return nil
}

// InboxMaxUpdateID returns the highest update id ever stored, processed or
// not, or 0 for an empty inbox. The poller resumes from it plus one.
func (db *DB) InboxMaxUpdateID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := db.reader.QueryRowContext(ctx, `SELECT max(update_id) FROM inbox`).Scan(&id); err != nil {
		return 0, fmt.Errorf("max inbox update id: %w", err)
	}
	return id.Int64, nil
}

// InboxBacklog returns how many items are not yet processed, and when the
// oldest of them was received (zero when none are).
func (db *DB) InboxBacklog(ctx context.Context) (int, time.Time, error) {
	var n int
	var oldest sql.NullInt64
	err := db.reader.QueryRowContext(ctx, `SELECT count(*), min(received_at) FROM inbox WHERE processed_at IS NULL`).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("inbox backlog: %w", err)
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, fromMillis(oldest.Int64), nil
}

// InboxPrune deletes processed items received before the given time and
// returns how many it deleted. The item with the highest update id is always
// kept, so that [DB.InboxMaxUpdateID] still knows where to resume.
func (db *DB) InboxPrune(ctx context.Context, before time.Time) (int64, error) {
	if err := db.gate.enter(ctx, false); err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	defer db.gate.leave()
	res, err := db.writer.ExecContext(ctx, `DELETE FROM inbox
		WHERE processed_at IS NOT NULL AND received_at < ?
		AND update_id < (SELECT max(update_id) FROM inbox)`, millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	return n, nil
}

// writeFull is write with synchronous=FULL for this one transaction.
//
// The pragma is per connection, so it is set on the writer's one connection,
// held for the whole call so no other write can run in between, and put back
// to NORMAL afterwards. Opening the writer at FULL instead would fsync every
// message and audit row as well, for no gain: those are safe against a
// process crash at NORMAL, and power loss is the only case FULL adds.
//
// An urgent write goes ahead of the writes queued at the gate.
func (db *DB) writeFull(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) error {
	return db.whenFree(ctx, func() error { return db.writeFullOnce(ctx, urgent, fn) })
}

// writeFullOnce is one attempt of writeFull.
func (db *DB) writeFullOnce(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) (err error) {
	if err := db.gate.enter(ctx, urgent); err != nil {
		return err
	}
	defer db.gate.leave()
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	// Registered before the change, which may take effect even if its Exec
	// reports the context's end; restoring NORMAL is harmless either way.
	defer func() {
		// Restore even when ctx is done; otherwise the connection would
		// silently keep fsyncing every commit.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = NORMAL`); rerr != nil {
			// Drop the connection: the pool opens a fresh one with the
			// DSN's pragmas. The write itself is unaffected.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
		return fmt.Errorf("set synchronous=FULL: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
