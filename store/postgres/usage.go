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
	err := db.row(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day = $2`, []any{userID, day(now)}, tokens(&u.Today)...)
	if err == nil {
		err = db.row(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day >= $2 AND day <= $3`,
			[]any{userID, day(monthStart), day(now)}, tokens(&u.Month)...)
	}
	if err != nil {
		return store.UserUsage{}, fmt.Errorf("token usage of user %q: %w", userID, err)
	}
	return u, nil
}

// DayUsage returns the user's tokens on t's UTC day.
func (db *DB) DayUsage(ctx context.Context, userID string, t time.Time) (store.Tokens, error) {
	var u store.Tokens
	err := db.row(ctx, `SELECT `+tokenSums+` FROM token_usage WHERE user_id = $1 AND day = $2`, []any{userID, day(t)}, tokens(&u)...)
	if err != nil {
		return store.Tokens{}, fmt.Errorf("token usage of user %q on %s: %w", userID, day(t), err)
	}
	return u, nil
}

// tokens are the scan targets of tokenSums.
func tokens(t *store.Tokens) []any {
	return []any{&t.Calls, &t.In, &t.Out, &t.EstimatedIn, &t.EstimatedOut}
}
