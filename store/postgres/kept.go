package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Links and app views are rows a chat keeps for a while, its newest few
// only: each is put with the chat's expired and oldest rows trimmed in the
// same transaction, and pruned of the expired in a sweep.

// putKept runs insert with args, then deletes the chat's rows of table
// expired at created or beyond the newest keep (at least 1) by the
// column order, in one transaction; table and order are constants of ours.
func (db *DB) putKept(ctx context.Context, insert string, args []any, table, order, chat string, created time.Time, keep int) error {
	return db.tx(ctx, idempotent, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insert, args...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE chat_id = $1 AND (expires_at <= $2 OR `+order+` NOT IN
			(SELECT `+order+` FROM `+table+` WHERE chat_id = $1 ORDER BY `+order+` DESC LIMIT $3))`, text(chat), millis(created), max(keep, 1))
		return err
	})
}

// pruneExpired deletes the rows of tables (constants of ours) expired at
// or before now, and returns how many.
func (db *DB) pruneExpired(ctx context.Context, now time.Time, tables ...string) (int64, error) {
	var n int64
	for _, table := range tables {
		tag, err := db.exec(ctx, idempotent, `DELETE FROM `+table+` WHERE expires_at <= $1`, millis(now))
		if err != nil {
			return n, fmt.Errorf("prune %s: %w", table, err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}
