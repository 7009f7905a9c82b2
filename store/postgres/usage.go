package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
)

const (
	dayLayout   = "2006-01-02"
	addUsageSQL = `INSERT INTO token_usage (user_id, day, model, calls, in_tokens, out_tokens, est_in, est_out)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (user_id, day, model) DO UPDATE SET
			calls = token_usage.calls + excluded.calls,
			in_tokens = token_usage.in_tokens + excluded.in_tokens,
			out_tokens = token_usage.out_tokens + excluded.out_tokens,
			est_in = token_usage.est_in + excluded.est_in,
			est_out = token_usage.est_out + excluded.est_out`
	// The sums of bigints are numeric in PostgreSQL: cast them back.
	tokenSums = `coalesce(sum(calls), 0)::bigint, coalesce(sum(in_tokens), 0)::bigint, coalesce(sum(out_tokens), 0)::bigint,
		coalesce(sum(est_in), 0)::bigint, coalesce(sum(est_out), 0)::bigint`
)

// day is the UTC day t falls on, as stored.
func day(t time.Time) string { return t.UTC().Format(dayLayout) }

// AddUsage adds us to their users' days, in one transaction.
func (db *DB) AddUsage(ctx context.Context, us ...store.Usage) error {
	if len(us) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	queueUsage(b, time.Now(), us)
	if err := db.tx(ctx, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() }); err != nil {
		return fmt.Errorf("add token usage: %w", err)
	}
	return nil
}

// queueUsage adds the upserts of us to b.
func queueUsage(b *pgx.Batch, now time.Time, us []store.Usage) {
	for _, u := range us {
		at := u.At
		if at.IsZero() {
			at = now
		}
		var estIn, estOut int
		if u.Estimated {
			estIn, estOut = u.In, u.Out
		}
		b.Queue(addUsageSQL, text(u.UserID), day(at), text(u.Model), max(u.Calls, 1), u.In, u.Out, estIn, estOut)
	}
}

// UserUsage returns the user's tokens on now's UTC day and in its month.
func (db *DB) UserUsage(ctx context.Context, userID string, now time.Time) (store.UserUsage, error) {
	now = now.UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	var u store.UserUsage
	err := db.pool.QueryRow(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day = $2`, userID, day(now)).Scan(tokens(&u.Today)...)
	if err == nil {
		err = db.pool.QueryRow(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day >= $2 AND day <= $3`,
			userID, day(monthStart), day(now)).Scan(tokens(&u.Month)...)
	}
	if err != nil {
		return store.UserUsage{}, fmt.Errorf("token usage of user %q: %w", userID, err)
	}
	return u, nil
}

// DayUsage returns the user's tokens on t's UTC day.
func (db *DB) DayUsage(ctx context.Context, userID string, t time.Time) (store.Tokens, error) {
	var u store.Tokens
	err := db.pool.QueryRow(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day = $2`, userID, day(t)).Scan(tokens(&u)...)
	if err != nil {
		return store.Tokens{}, fmt.Errorf("token usage of user %q on %s: %w", userID, day(t), err)
	}
	return u, nil
}

// UsageByModel returns the tokens per model over the UTC days from from's
// to to's, both included, most tokens first.
func (db *DB) UsageByModel(ctx context.Context, from, to time.Time) ([]store.ModelUsage, error) {
	rows, err := db.pool.Query(ctx, `SELECT model, `+tokenSums+` FROM token_usage
		WHERE day BETWEEN $1 AND $2 GROUP BY model
		ORDER BY sum(in_tokens) + sum(out_tokens) DESC, model`, day(from), day(to))
	if err != nil {
		return nil, fmt.Errorf("token usage by model: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.ModelUsage, error) {
		var m store.ModelUsage
		return m, row.Scan(append([]any{&m.Model}, tokens(&m.Tokens)...)...)
	})
	if err != nil {
		return nil, fmt.Errorf("token usage by model: %w", err)
	}
	return out, nil
}

// TopUsers returns the limit users with the most tokens over the UTC days
// from from's to to's, both included, most first; limit <= 0 returns all.
func (db *DB) TopUsers(ctx context.Context, from, to time.Time, limit int) ([]store.UserTokens, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := db.pool.Query(ctx, `SELECT user_id, `+tokenSums+` FROM token_usage
		WHERE day BETWEEN $1 AND $2 GROUP BY user_id
		ORDER BY sum(in_tokens) + sum(out_tokens) DESC, user_id LIMIT $3`, day(from), day(to), lim)
	if err != nil {
		return nil, fmt.Errorf("top users by tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.UserTokens, error) {
		var u store.UserTokens
		return u, row.Scan(append([]any{&u.UserID}, tokens(&u.Tokens)...)...)
	})
	if err != nil {
		return nil, fmt.Errorf("top users by tokens: %w", err)
	}
	return out, nil
}

// tokens are the scan targets of tokenSums.
func tokens(t *store.Tokens) []any {
	return []any{&t.Calls, &t.In, &t.Out, &t.EstimatedIn, &t.EstimatedOut}
}
