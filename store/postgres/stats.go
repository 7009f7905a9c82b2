package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/internal/tables"
)

const insertTurnSQL = `INSERT INTO turns (` + tables.TurnColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`

// RecordTurn stores how a turn ended, with its model calls: one small
// insert, for a turn that does not end on a write of its own.
func (db *DB) RecordTurn(ctx context.Context, r store.TurnRecord) error {
	// Once: a second run would count the turn twice.
	if _, err := db.exec(ctx, once, insertTurnSQL, turnArgs(r, time.Now())...); err != nil {
		return fmt.Errorf("record turn %s: %w", r.TurnID, err)
	}
	return nil
}

// turnArgs are insertTurnSQL's arguments for r, as text PostgreSQL takes.
func turnArgs(r store.TurnRecord, now time.Time) []any {
	r.TurnID, r.UserID, r.ChatID, r.Outcome, r.Kind, r.Model = text(r.TurnID), text(r.UserID), text(r.ChatID), text(r.Outcome), text(r.Kind), text(r.Model)
	args := tables.TurnArgs(r, now)
	args[7] = text(args[7].(string))   // the failures' kinds
	args[18] = text(args[18].(string)) // the tools searches found
	return args
}

// Stats computes the window [from, to), naming at most top users by
// tokens; see store.ReadStats.
func (db *DB) Stats(ctx context.Context, from, to time.Time, top int) (store.Stats, error) {
	// Retried whole: each run starts its sums afresh.
	var s store.Stats
	err := db.do(ctx, reads, func(int) error {
		var err error
		s, err = tables.ReadStats(ctx, db.statsRows, from, to, top)
		return err
	})
	return s, err
}

func (db *DB) statsRows(ctx context.Context, query string, args []any, row func(scan func(...any) error) error) error {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PruneStats deletes the turns recorded before before, and returns how
// many went. The audit log and token usage are kept.
func (db *DB) PruneStats(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.exec(ctx, idempotent, `DELETE FROM turns WHERE created_at < $1`, millis(before))
	if err != nil {
		return 0, fmt.Errorf("prune stats: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Timeline counts the turns of [from, to) by outcome, in stretches of
// step; see store.ReadTimeline.
func (db *DB) Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	var b []store.Bucket
	err := db.do(ctx, reads, func(int) error {
		var err error
		b, err = tables.ReadTimeline(ctx, db.statsRows, from, to, step)
		return err
	})
	return b, err
}
