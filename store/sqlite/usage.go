package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

const (
	dayLayout   = "2006-01-02"
	addUsageSQL = `INSERT INTO token_usage (user_id, day, model, calls, in_tokens, out_tokens, est_in, est_out)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id, day, model) DO UPDATE SET
			calls = calls + excluded.calls,
			in_tokens = in_tokens + excluded.in_tokens,
			out_tokens = out_tokens + excluded.out_tokens,
			est_in = est_in + excluded.est_in,
			est_out = est_out + excluded.est_out`
	// userUsageSQL sums a user's month in two rows: today, and the other
	// days of the month.
	userUsageSQL = `SELECT day = ? AS today, sum(calls), sum(in_tokens), sum(out_tokens), sum(est_in), sum(est_out)
		FROM token_usage WHERE user_id = ? AND day >= ? GROUP BY today`
	// dayUsageSQL reads one user's day: a row per model, by the key.
	dayUsageSQL = `SELECT coalesce(` + "sum(calls), 0), coalesce(sum(in_tokens), 0), coalesce(sum(out_tokens), 0), coalesce(sum(est_in), 0), coalesce(sum(est_out), 0)" + `
		FROM token_usage WHERE user_id = ? AND day = ?`
)

// day is the UTC day t falls on, as stored.
func day(t time.Time) string { return t.UTC().Format(dayLayout) }

// addUsage adds us to their users' days, in tx.
func (db *DB) addUsage(ctx context.Context, tx *sql.Tx, now time.Time, us []store.Usage) error {
	for _, u := range us {
		at := u.At
		if at.IsZero() {
			at = now
		}
		calls := max(u.Calls, 1)
		var estIn, estOut int
		if u.Estimated {
			estIn, estOut = u.In, u.Out
		}
		if _, err := db.txExec(ctx, tx, addUsageSQL, u.UserID, day(at), u.Model, calls, u.In, u.Out, estIn, estOut); err != nil {
			return fmt.Errorf("user %q, model %q: %w", u.UserID, u.Model, err)
		}
	}
	return nil
}

// UserUsage returns the user's tokens on now's UTC day and in its month.
func (db *DB) UserUsage(ctx context.Context, userID string, now time.Time) (store.UserUsage, error) {
	now = now.UTC()
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	rows, err := db.readRows(ctx, userUsageSQL, day(now), userID, day(monthStart))
	if err != nil {
		return store.UserUsage{}, fmt.Errorf("token usage of user %q: %w", userID, err)
	}
	defer func() { _ = rows.Close() }()
	var u store.UserUsage
	for rows.Next() {
		var today bool
		var t store.Tokens
		if err := rows.Scan(&today, &t.Calls, &t.In, &t.Out, &t.EstimatedIn, &t.EstimatedOut); err != nil {
			return store.UserUsage{}, fmt.Errorf("token usage of user %q: %w", userID, err)
		}
		if today {
			u.Today = t
		}
		u.Month = addTokens(u.Month, t)
	}
	if err := rows.Err(); err != nil {
		return store.UserUsage{}, fmt.Errorf("token usage of user %q: %w", userID, err)
	}
	return u, nil
}

// DayUsage returns the user's tokens on t's UTC day: what a daily budget
// checks before each turn, cheaper than [DB.UserUsage].
func (db *DB) DayUsage(ctx context.Context, userID string, t time.Time) (store.Tokens, error) {
	var u store.Tokens
	err := db.readRow(ctx, dayUsageSQL, userID, day(t)).Scan(&u.Calls, &u.In, &u.Out, &u.EstimatedIn, &u.EstimatedOut)
	if err != nil {
		return store.Tokens{}, fmt.Errorf("token usage of user %q on %s: %w", userID, day(t), err)
	}
	return u, nil
}

// addTokens returns the sum of t and o.
func addTokens(t, o store.Tokens) store.Tokens {
	return store.Tokens{
		Calls: t.Calls + o.Calls, In: t.In + o.In, Out: t.Out + o.Out,
		EstimatedIn: t.EstimatedIn + o.EstimatedIn, EstimatedOut: t.EstimatedOut + o.EstimatedOut,
	}
}

// usageQuery runs a report query (rare: not prepared) and calls each for
// every row.
func (db *DB) usageQuery(ctx context.Context, query string, each func(*sql.Rows) error, args ...any) error {
	rows, err := db.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
