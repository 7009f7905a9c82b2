package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const insertTurnSQL = `INSERT INTO turns (` + tables.TurnColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordTurn stores how a turn ended, with its model calls: one small
// insert, for a turn that does not end on a write of its own (see
// [store.TurnWrite]).
func (db *DB) RecordTurn(ctx context.Context, r store.TurnRecord) error {
	if _, err := db.writeExec(ctx, insertTurnSQL, tables.TurnArgs(r, db.now())...); err != nil {
		return fmt.Errorf("record turn %s: %w", r.TurnID, err)
	}
	return nil
}

// Stats computes the window [from, to), naming at most top users by
// tokens.
func (db *DB) Stats(ctx context.Context, from, to time.Time, top int) (store.Stats, error) {
	return tables.ReadStats(ctx, db.statsRows, from, to, top)
}

func (db *DB) statsRows(ctx context.Context, query string, args []any, row func(scan func(...any) error) error) error {
	return db.usageQuery(ctx, query, func(rows *sql.Rows) error { return row(rows.Scan) }, args...)
}

// PruneStats deletes the turns recorded before before, and returns how
// many went. The audit log and token usage are kept: they are records,
// not statistics.
func (db *DB) PruneStats(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM turns WHERE created_at < ?`, millis(before))
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune stats: %w", err)
	}
	return n, nil
}

// Timeline counts the turns of [from, to) by outcome, in stretches of
// step; see store.Statistics.
func (db *DB) Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	return tables.ReadTimeline(ctx, db.statsRows, from, to, step)
}
