package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

const (
	insertTurnSQL = `INSERT INTO turns (turn_id, user_id, chat_id, outcome, kind, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`
	insertModelCallSQL = `INSERT INTO model_calls (user_id, model, outcome, duration_ms, first_token_ms,
		in_tokens, out_tokens, first_try, repaired, fed_back, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
)

// RecordTurn stores how a turn ended: one small insert per turn.
func (db *DB) RecordTurn(ctx context.Context, r store.TurnRecord) error {
	if _, err := db.pool.Exec(ctx, insertTurnSQL, turnArgs(r, time.Now())...); err != nil {
		return fmt.Errorf("record turn %s: %w", r.TurnID, err)
	}
	return nil
}

// turnArgs are insertTurnSQL's arguments for r; a zero At means now.
func turnArgs(r store.TurnRecord, now time.Time) []any {
	at := r.At
	if at.IsZero() {
		at = now
	}
	return []any{text(r.TurnID), text(r.UserID), text(r.ChatID), text(r.Outcome), text(r.Kind), millis(at)}
}

// queueModelCalls adds the inserts of cs to b.
func queueModelCalls(b *pgx.Batch, now time.Time, cs []store.ModelCall) {
	for _, c := range cs {
		c.UserID, c.Model, c.Outcome = text(c.UserID), text(c.Model), text(c.Outcome)
		b.Queue(insertModelCallSQL, store.ModelCallArgs(c, now)...)
	}
}

// Stats computes the window [from, to), naming at most top users by
// tokens; see store.ReadStats.
func (db *DB) Stats(ctx context.Context, from, to time.Time, top int) (store.Stats, error) {
	return store.ReadStats(ctx, db.statsRows, from, to, top)
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

// PruneStats deletes the turns and model calls recorded before before,
// and returns how many rows went. The audit log and token usage are kept.
func (db *DB) PruneStats(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := db.tx(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{`DELETE FROM turns WHERE created_at < $1`, `DELETE FROM model_calls WHERE created_at < $1`} {
			tag, err := tx.Exec(ctx, q, millis(before))
			if err != nil {
				return err
			}
			n += tag.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune stats: %w", err)
	}
	return n, nil
}

// Timeline counts the turns of [from, to) by outcome, in stretches of
// step; see store.ReadTimeline.
func (db *DB) Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	return store.ReadTimeline(ctx, db.statsRows, from, to, step)
}
