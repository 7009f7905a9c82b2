package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// /stats: how each turn ended and the model calls it made, beside the
// audit log and token usage, read over a window for the admins. The rows
// outlive the process (Prometheus counters do not) and, on PostgreSQL,
// cover every instance. A turn is one row, whatever its calls: the cost of
// the statistics is one insert per turn, most often in a transaction the
// turn makes anyway. Both engines compute a window with [ReadStats], on
// the same SQL.

// A TurnRecord is how one turn ended, and its model calls.
type TurnRecord struct {
	TurnID, UserID, ChatID string
	// Outcome is answer, question, approval, error, limit, cancelled or
	// budget, as mcpgram_turns_total counts them.
	Outcome string
	// Kind narrows an error: the model's failure kind, format, busy or
	// internal; "" otherwise.
	Kind string
	// Model is the model the turn called, and Calls its calls in order.
	Model string
	Calls []ModelCall
	// At is when it ended; zero means now.
	At time.Time
}

// A ModelCall is one call of the model, for /stats.
type ModelCall struct {
	// Outcome is ok, cancelled, or the failure kind after retries.
	Outcome string
	// Duration is the whole call, retries included; stored in
	// milliseconds.
	Duration time.Duration
	// In and Out are the tokens read and written, as counted for usage.
	In, Out int
	// FirstTry, Repaired and FedBack count the tool blocks of the reply
	// that the bot acted on: right at the first try, repaired, or sent
	// back to the model to correct.
	FirstTry, Repaired, FedBack int
}

// Stats is what happened over a window, for /stats.
type Stats struct {
	// From and To bound the window: From <= created_at < To.
	From, To time.Time
	// Turns counts turns by outcome, most first.
	Turns []Count
	// Errors counts turns that ended in an error or at the turn limit, by
	// kind ("limit" for the latter), most first.
	Errors []Count
	// Models has one entry per model, most calls first.
	Models []ModelStats
	// Tools has one entry per server and tool of the audit log, most calls
	// first.
	Tools []ToolStats
	// TopUsers are the users with the most tokens, most first.
	TopUsers []UserTokens
}

// A Count is a number of things of one name.
type Count struct {
	Name string
	N    int64
}

// Total sums cs.
func Total(cs []Count) int64 {
	var n int64
	for _, c := range cs {
		n += c.N
	}
	return n
}

// ModelStats is one model's calls over a window.
type ModelStats struct {
	Model string
	// Calls counts every call; Failures those that failed, by kind
	// (cancelled calls are neither ok nor failures).
	Calls    int64
	Failures []Count
	// P50 and P95 are the nearest-rank percentiles of the duration of the
	// calls that were not cancelled.
	P50, P95 time.Duration
	// FirstTry of Blocks tool blocks were right at the first try.
	FirstTry, Blocks int64
	// In and Out are the tokens read and written.
	In, Out int64
}

// ToolStats is one tool's calls over a window, from the audit log.
type ToolStats struct {
	Server, Tool string
	// Calls counts the calls that ran (ok or error); Failed those that
	// failed; Denied those the user denied or let expire.
	Calls, Failed, Denied int64
	// P50 and P95 are the nearest-rank percentiles of the duration of the
	// calls that ran.
	P50, P95 time.Duration
}

// Audit statuses /stats reads; see the agent's audit rows.
const (
	auditOK      = "ok"
	auditError   = "error"
	auditDenied  = "denied"
	auditExpired = "expired"
)

// A RowFunc runs query with args and calls row for each result row, which
// scans it with scan; each engine has one. The statements use $1, $2
// placeholders, which both PostgreSQL and modernc's SQLite read.
type RowFunc func(ctx context.Context, query string, args []any, row func(scan func(dest ...any) error) error) error

// The statements of a window, $1 <= created_at < $2. Sums are cast back
// to bigint, which PostgreSQL would make numeric.
//
// Percentiles are nearest-rank: of the n durations in order, the p-th
// percentile is the one at rank ceil(p*n/100) = (p*n+99)/100 in integer
// arithmetic, so that at least p % of the values are at most it, and it is
// one of them. The tools' are computed in the database, over the audit
// log's rows; the model's in Go, over the durations the window's turns
// list.
const (
	statsTurnsSQL = `SELECT outcome, kind, count(*) FROM turns
		WHERE created_at >= $1 AND created_at < $2 GROUP BY outcome, kind`
	statsModelsSQL = `SELECT model, calls, failures, durations_ms, in_tokens, out_tokens, first_try, repaired, fed_back
		FROM turns WHERE created_at >= $1 AND created_at < $2 AND calls > 0`
	statsToolsSQL = `SELECT server, tool, status, count(*) FROM tool_calls
		WHERE created_at >= $1 AND created_at < $2 GROUP BY server, tool, status`
	statsToolLatencySQL = `SELECT server, tool, rn, n, duration_ms FROM (
			SELECT server, tool, duration_ms,
				row_number() OVER (PARTITION BY server, tool ORDER BY duration_ms) AS rn,
				count(*) OVER (PARTITION BY server, tool) AS n
			FROM tool_calls WHERE created_at >= $1 AND created_at < $2 AND status IN ('ok', 'error')) AS ranked
		WHERE rn = (50 * n + 99) / 100 OR rn = (95 * n + 99) / 100`
	statsUsersSQL = `SELECT user_id, CAST(sum(calls) AS bigint), CAST(sum(in_tokens) AS bigint), CAST(sum(out_tokens) AS bigint)
		FROM turns WHERE created_at >= $1 AND created_at < $2 AND calls > 0 GROUP BY user_id
		ORDER BY sum(in_tokens) + sum(out_tokens) DESC, user_id LIMIT $3`
)

// ReadStats computes the window [from, to) with rows, naming at most top
// users (top <= 0: none).
func ReadStats(ctx context.Context, rows RowFunc, from, to time.Time, top int) (Stats, error) {
	s := Stats{From: from.UTC().Truncate(time.Millisecond), To: to.UTC().Truncate(time.Millisecond)}
	window := []any{millis(from), millis(to)}
	errs := map[string]int64{}
	err := rows(ctx, statsTurnsSQL, window, func(scan func(...any) error) error {
		var c Count
		var kind string
		if err := scan(&c.Name, &kind, &c.N); err != nil {
			return err
		}
		s.Turns = addCount(s.Turns, c.Name, c.N)
		switch c.Name {
		case "error":
			errs[kind] += c.N
		case "limit":
			errs["limit"] += c.N
		}
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("stats of turns: %w", err)
	}
	for k, n := range errs {
		s.Errors = append(s.Errors, Count{Name: k, N: n})
	}
	sortCounts(s.Turns)
	sortCounts(s.Errors)
	if err := readModelStats(ctx, rows, window, &s); err != nil {
		return Stats{}, fmt.Errorf("stats of model calls: %w", err)
	}
	if err := readToolStats(ctx, rows, window, &s); err != nil {
		return Stats{}, fmt.Errorf("stats of tool calls: %w", err)
	}
	if top > 0 {
		err := rows(ctx, statsUsersSQL, append(window, top), func(scan func(...any) error) error {
			var u UserTokens
			if err := scan(&u.UserID, &u.Calls, &u.In, &u.Out); err != nil {
				return err
			}
			s.TopUsers = append(s.TopUsers, u)
			return nil
		})
		if err != nil {
			return Stats{}, fmt.Errorf("stats of users: %w", err)
		}
	}
	return s, nil
}

func readModelStats(ctx context.Context, rows RowFunc, window []any, s *Stats) error {
	byModel := map[string]*ModelStats{}
	durations := map[string][]int64{}
	err := rows(ctx, statsModelsSQL, window, func(scan func(...any) error) error {
		var name, failures, ms string
		var calls, in, out, first, repaired, fedBack int64
		if err := scan(&name, &calls, &failures, &ms, &in, &out, &first, &repaired, &fedBack); err != nil {
			return err
		}
		m := byModel[name]
		if m == nil {
			m = &ModelStats{Model: name}
			byModel[name] = m
		}
		m.Calls += calls
		m.In += in
		m.Out += out
		m.FirstTry += first
		m.Blocks += first + repaired + fedBack
		for _, kind := range strings.Fields(failures) {
			m.Failures = addCount(m.Failures, kind, 1)
		}
		for _, d := range strings.Fields(ms) {
			v, err := strconv.ParseInt(d, 10, 64)
			if err != nil {
				return fmt.Errorf("model %q: duration %q: %w", name, d, err)
			}
			durations[name] = append(durations[name], v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for name, m := range byModel {
		ds := durations[name]
		slices.Sort(ds)
		if n := int64(len(ds)); n > 0 {
			m.P50 = time.Duration(ds[(50*n+99)/100-1]) * time.Millisecond
			m.P95 = time.Duration(ds[(95*n+99)/100-1]) * time.Millisecond
		}
		sortCounts(m.Failures)
		s.Models = append(s.Models, *m)
	}
	slices.SortFunc(s.Models, func(a, b ModelStats) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Model, b.Model))
	})
	return nil
}

func readToolStats(ctx context.Context, rows RowFunc, window []any, s *Stats) error {
	type key struct{ server, tool string }
	byTool := map[key]*ToolStats{}
	tool := func(k key) *ToolStats {
		t := byTool[k]
		if t == nil {
			t = &ToolStats{Server: k.server, Tool: k.tool}
			byTool[k] = t
		}
		return t
	}
	err := rows(ctx, statsToolsSQL, window, func(scan func(...any) error) error {
		var k key
		var status string
		var n int64
		if err := scan(&k.server, &k.tool, &status, &n); err != nil {
			return err
		}
		t := tool(k)
		switch status {
		case auditOK:
			t.Calls += n
		case auditError:
			t.Calls += n
			t.Failed += n
		case auditDenied, auditExpired:
			t.Denied += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = rows(ctx, statsToolLatencySQL, window, func(scan func(...any) error) error {
		var k key
		var rank, n, ms int64
		if err := scan(&k.server, &k.tool, &rank, &n, &ms); err != nil {
			return err
		}
		t := tool(k)
		setPercentiles(&t.P50, &t.P95, rank, n, ms)
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range byTool {
		s.Tools = append(s.Tools, *t)
	}
	slices.SortFunc(s.Tools, func(a, b ToolStats) int {
		return cmp.Or(cmp.Compare(b.Calls+b.Denied, a.Calls+a.Denied),
			strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	return nil
}

// setPercentiles sets p50 and p95 from a row at rank of n (both may be
// the same row).
func setPercentiles(p50, p95 *time.Duration, rank, n, ms int64) {
	d := time.Duration(ms) * time.Millisecond
	if rank == (50*n+99)/100 {
		*p50 = d
	}
	if rank == (95*n+99)/100 {
		*p95 = d
	}
}

func addCount(cs []Count, name string, n int64) []Count {
	for i := range cs {
		if cs[i].Name == name {
			cs[i].N += n
			return cs
		}
	}
	return append(cs, Count{Name: name, N: n})
}

// sortCounts orders cs most first, then by name.
func sortCounts(cs []Count) {
	slices.SortFunc(cs, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name))
	})
}

const insertTurnSQL = `INSERT INTO turns (turn_id, user_id, chat_id, outcome, kind, model, calls, failures,
	durations_ms, in_tokens, out_tokens, first_try, repaired, fed_back, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordTurn stores how a turn ended, with its model calls: one small
// insert, for a turn that does not end on a write of its own (see
// [TurnWrite]).
func (db *DB) RecordTurn(ctx context.Context, r TurnRecord) error {
	if _, err := db.writeExec(ctx, insertTurnSQL, TurnArgs(r, db.now())...); err != nil {
		return fmt.Errorf("record turn %s: %w", r.TurnID, err)
	}
	return nil
}

// TurnArgs are the values of r's row of turns, in column order (turn_id …
// created_at); a zero At means now. Both engines insert them.
func TurnArgs(r TurnRecord, now time.Time) []any {
	at := r.At
	if at.IsZero() {
		at = now
	}
	var failures, durations []string
	var in, out, first, repaired, fedBack int
	for _, c := range r.Calls {
		if c.Outcome != "ok" && c.Outcome != "cancelled" {
			// Kinds have no spaces; a list of them is split on spaces.
			failures = append(failures, strings.ReplaceAll(c.Outcome, " ", "_"))
		}
		if c.Outcome != "cancelled" {
			durations = append(durations, strconv.FormatInt(c.Duration.Milliseconds(), 10))
		}
		in, out = in+c.In, out+c.Out
		first, repaired, fedBack = first+c.FirstTry, repaired+c.Repaired, fedBack+c.FedBack
	}
	return []any{r.TurnID, r.UserID, r.ChatID, r.Outcome, r.Kind, r.Model, len(r.Calls),
		strings.Join(failures, " "), strings.Join(durations, " "), in, out, first, repaired, fedBack, millis(at)}
}

// Stats computes the window [from, to), naming at most top users by
// tokens.
func (db *DB) Stats(ctx context.Context, from, to time.Time, top int) (Stats, error) {
	return ReadStats(ctx, db.statsRows, from, to, top)
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

// A Bucket is the turns of one stretch of a timeline, by outcome.
type Bucket struct {
	// Start is where the stretch begins; it ends where the next begins.
	Start time.Time
	Turns []Count
}

// statsTimelineSQL counts turns by stretch of $3 ms from $1, and outcome.
const statsTimelineSQL = `SELECT (created_at - $1) / $3 AS bucket, outcome, count(*) FROM turns
	WHERE created_at >= $1 AND created_at < $2 GROUP BY bucket, outcome`

// ReadTimeline counts the turns of [from, to) by outcome, in stretches of
// step from from: one Bucket per stretch, empty ones included.
func ReadTimeline(ctx context.Context, rows RowFunc, from, to time.Time, step time.Duration) ([]Bucket, error) {
	if step < time.Millisecond || !to.After(from) {
		return nil, fmt.Errorf("timeline of %s to %s by %s: not a timeline", from, to, step)
	}
	n := int((to.Sub(from) + step - 1) / step)
	out := make([]Bucket, n)
	for i := range out {
		out[i].Start = from.Add(time.Duration(i) * step).UTC().Truncate(time.Millisecond)
	}
	err := rows(ctx, statsTimelineSQL, []any{millis(from), millis(to), step.Milliseconds()}, func(scan func(...any) error) error {
		var i, k int64
		var outcome string
		if err := scan(&i, &outcome, &k); err != nil {
			return err
		}
		if i >= 0 && i < int64(n) {
			out[i].Turns = addCount(out[i].Turns, outcome, k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("timeline of turns: %w", err)
	}
	for i := range out {
		sortCounts(out[i].Turns)
	}
	return out, nil
}

// Timeline counts the turns of [from, to) by outcome, in stretches of
// step; see [ReadTimeline].
func (db *DB) Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]Bucket, error) {
	return ReadTimeline(ctx, db.statsRows, from, to, step)
}
