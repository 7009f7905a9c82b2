package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Links and app views are rows a chat keeps for a while, its newest few
// only: each is put with the chat's expired and oldest rows trimmed in the
// same transaction, and pruned of the expired in a sweep.

// putKept runs insert with args, then trim with the chat, the time the row
// was made and how many the chat keeps (at least 1), in one transaction.
func (db *DB) putKept(ctx context.Context, insert string, args []any, trim, chat string, created time.Time, keep int) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, trim, chat, millis(created), chat, max(keep, 1))
		return err
	})
}

// pruneExpired deletes the rows of tables (constants of ours) expired at
// or before now, in one transaction, and returns how many.
func (db *DB) pruneExpired(ctx context.Context, now time.Time, tables ...string) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, table := range tables {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE expires_at <= ?`, millis(now))
			if err == nil {
				var m int64
				m, err = res.RowsAffected()
				n += m
			}
			if err != nil {
				return fmt.Errorf("prune %s: %w", table, err)
			}
		}
		return nil
	})
	return n, err
}
