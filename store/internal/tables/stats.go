package tables

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// /stats: how each turn ended and the model calls it made, beside the
// audit log and token usage, read over a window for the admins. The rows
// outlive the process (Prometheus counters do not) and, on PostgreSQL,
// cover every instance. A turn is one row, whatever its calls: the cost of
// the statistics is one insert per turn, most often in a transaction the
// turn makes anyway. Both engines compute a window with [ReadStats], on
// the same SQL.

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
	statsTasksSQL = `SELECT CASE WHEN finished_at IS NULL THEN 'running' ELSE status END, count(*) FROM tasks
		WHERE created_at >= $1 AND created_at < $2
		GROUP BY CASE WHEN finished_at IS NULL THEN 'running' ELSE status END`
	statsTaskLatencySQL = `SELECT rn, n, duration_ms FROM (
			SELECT finished_at - created_at AS duration_ms,
				row_number() OVER (ORDER BY finished_at - created_at) AS rn,
				count(*) OVER () AS n
			FROM tasks WHERE created_at >= $1 AND created_at < $2 AND finished_at IS NOT NULL) AS ranked
		WHERE rn = (50 * n + 99) / 100 OR rn = (95 * n + 99) / 100`
	statsUsersSQL = `SELECT user_id, CAST(sum(calls) AS bigint), CAST(sum(in_tokens) AS bigint), CAST(sum(out_tokens) AS bigint)
		FROM turns WHERE created_at >= $1 AND created_at < $2 AND calls > 0 GROUP BY user_id
		ORDER BY sum(in_tokens) + sum(out_tokens) DESC, user_id LIMIT $3`
)

// ReadStats computes the window [from, to) with rows, naming at most top
// users (top <= 0: none).
func ReadStats(ctx context.Context, rows RowFunc, from, to time.Time, top int) (store.Stats, error) {
	s := store.Stats{From: from.UTC().Truncate(time.Millisecond), To: to.UTC().Truncate(time.Millisecond)}
	window := []any{Millis(from), Millis(to)}
	errs := map[string]int64{}
	err := rows(ctx, statsTurnsSQL, window, func(scan func(...any) error) error {
		var c store.Count
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
		return store.Stats{}, fmt.Errorf("stats of turns: %w", err)
	}
	for k, n := range errs {
		s.Errors = append(s.Errors, store.Count{Name: k, N: n})
	}
	sortCounts(s.Turns)
	sortCounts(s.Errors)
	if err := readModelStats(ctx, rows, window, &s); err != nil {
		return store.Stats{}, fmt.Errorf("stats of model calls: %w", err)
	}
	if err := readToolStats(ctx, rows, window, &s); err != nil {
		return store.Stats{}, fmt.Errorf("stats of tool calls: %w", err)
	}
	if err := readSearchStats(ctx, rows, window, &s); err != nil {
		return store.Stats{}, fmt.Errorf("stats of tool searches: %w", err)
	}
	if err := readTaskStats(ctx, rows, window, &s.Tasks); err != nil {
		return store.Stats{}, fmt.Errorf("stats of tasks: %w", err)
	}
	if top > 0 {
		err := rows(ctx, statsUsersSQL, append(window, top), func(scan func(...any) error) error {
			var u store.UserTokens
			if err := scan(&u.UserID, &u.Calls, &u.In, &u.Out); err != nil {
				return err
			}
			s.TopUsers = append(s.TopUsers, u)
			return nil
		})
		if err != nil {
			return store.Stats{}, fmt.Errorf("stats of users: %w", err)
		}
	}
	return s, nil
}

func readModelStats(ctx context.Context, rows RowFunc, window []any, s *store.Stats) error {
	byModel := map[string]*store.ModelStats{}
	durations := map[string][]int64{}
	err := rows(ctx, statsModelsSQL, window, func(scan func(...any) error) error {
		var name, failures, ms string
		var calls, in, out, first, repaired, fedBack int64
		if err := scan(&name, &calls, &failures, &ms, &in, &out, &first, &repaired, &fedBack); err != nil {
			return err
		}
		m := byModel[name]
		if m == nil {
			m = &store.ModelStats{Model: name}
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
	slices.SortFunc(s.Models, func(a, b store.ModelStats) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Model, b.Model))
	})
	return nil
}

func readToolStats(ctx context.Context, rows RowFunc, window []any, s *store.Stats) error {
	type key struct{ server, tool string }
	byTool := map[key]*store.ToolStats{}
	tool := func(k key) *store.ToolStats {
		t := byTool[k]
		if t == nil {
			t = &store.ToolStats{Server: k.server, Tool: k.tool}
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
	slices.SortFunc(s.Tools, func(a, b store.ToolStats) int {
		return cmp.Or(cmp.Compare(b.Calls+b.Denied, a.Calls+a.Denied),
			strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	return nil
}

// readTaskStats reads the window's background calls: their outcomes, and
// how long the ended ones ran.
func readTaskStats(ctx context.Context, rows RowFunc, window []any, ts *store.TaskStats) error {
	err := rows(ctx, statsTasksSQL, window, func(scan func(...any) error) error {
		var c store.Count
		if err := scan(&c.Name, &c.N); err != nil {
			return err
		}
		ts.Outcomes = append(ts.Outcomes, c)
		return nil
	})
	if err != nil {
		return err
	}
	sortCounts(ts.Outcomes)
	return rows(ctx, statsTaskLatencySQL, window, func(scan func(...any) error) error {
		var rank, n, ms int64
		if err := scan(&rank, &n, &ms); err != nil {
			return err
		}
		setPercentiles(&ts.P50, &ts.P95, rank, n, ms)
		return nil
	})
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

func addCount(cs []store.Count, name string, n int64) []store.Count {
	for i := range cs {
		if cs[i].Name == name {
			cs[i].N += n
			return cs
		}
	}
	return append(cs, store.Count{Name: name, N: n})
}

// sortCounts orders cs most first, then by name.
func sortCounts(cs []store.Count) {
	slices.SortFunc(cs, func(a, b store.Count) int {
		return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name))
	})
}

// TurnArgs are the values of r's row of turns, in column order (turn_id …
// created_at); a zero At means now. Both engines insert them.
func TurnArgs(r store.TurnRecord, now time.Time) []any {
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
	searches, empty, followed, found := searchArgs(r.Searches)
	return []any{r.TurnID, r.UserID, r.ChatID, r.Outcome, r.Kind, r.Model, len(r.Calls),
		strings.Join(failures, " "), strings.Join(durations, " "), in, out, first, repaired, fedBack, Millis(at),
		searches, empty, followed, found}
}

// TurnColumns are the columns TurnArgs gives values of, in order.
const TurnColumns = `turn_id, user_id, chat_id, outcome, kind, model, calls, failures,
	durations_ms, in_tokens, out_tokens, first_try, repaired, fed_back, created_at,
	searches, searches_empty, searches_followed, search_found`

// A foundRow is one tool a search found, as search_found keeps it:
// [server, tool, 1 if the model then called it, else 0].
type foundRow [3]any

// searchArgs sums a turn's searches for its row: how many, how many
// found nothing, how many were followed by a call of a tool they found,
// and every tool found (with whether it was called) as JSON.
func searchArgs(searches []store.Search) (n, empty, followed int, found string) {
	var rows []foundRow
	for _, s := range searches {
		if len(s.Found) == 0 {
			empty++
		}
		if len(s.Called) > 0 {
			followed++
		}
		for _, f := range s.Found {
			called := 0
			if slices.Contains(s.Called, f) {
				called = 1
			}
			rows = append(rows, foundRow{f.Server, f.Tool, called})
		}
	}
	if len(rows) == 0 {
		return len(searches), empty, followed, ""
	}
	b, _ := json.Marshal(rows) // strings and numbers: cannot fail
	return len(searches), empty, followed, string(b)
}

// statsSearchSQL reads the turns of a window that searched for tools.
const statsSearchSQL = `SELECT searches, searches_empty, searches_followed, search_found FROM turns
	WHERE created_at >= $1 AND created_at < $2 AND searches > 0`

// readSearchStats sums the window's searches, and the tools they found.
func readSearchStats(ctx context.Context, rows RowFunc, window []any, s *store.Stats) error {
	type key struct{ server, tool string }
	tools := map[key]*store.FoundTool{}
	err := rows(ctx, statsSearchSQL, window, func(scan func(...any) error) error {
		var n, empty, followed int64
		var found string
		if err := scan(&n, &empty, &followed, &found); err != nil {
			return err
		}
		s.Search.Searches += n
		s.Search.Empty += empty
		s.Search.Followed += followed
		if found == "" {
			return nil
		}
		var list [][3]json.RawMessage
		if err := json.Unmarshal([]byte(found), &list); err != nil {
			return fmt.Errorf("tools found %q: %w", found, err)
		}
		for _, r := range list {
			var k key
			var called int64
			if json.Unmarshal(r[0], &k.server) != nil || json.Unmarshal(r[1], &k.tool) != nil || json.Unmarshal(r[2], &called) != nil {
				return fmt.Errorf("tools found %q: not [server, tool, called]", found)
			}
			t := tools[k]
			if t == nil {
				t = &store.FoundTool{Server: k.server, Tool: k.tool}
				tools[k] = t
			}
			t.Found++
			t.Called += called
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range tools {
		s.Search.Tools = append(s.Search.Tools, *t)
	}
	slices.SortFunc(s.Search.Tools, func(a, b store.FoundTool) int {
		return cmp.Or(cmp.Compare(b.Found, a.Found), cmp.Compare(b.Called, a.Called),
			strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	return nil
}

// statsTimelineSQL counts turns by stretch of $3 ms from $1, and outcome.
const statsTimelineSQL = `SELECT (created_at - $1) / $3 AS bucket, outcome, count(*) FROM turns
	WHERE created_at >= $1 AND created_at < $2 GROUP BY bucket, outcome`

// ReadTimeline counts the turns of [from, to) by outcome, in stretches of
// step from from: one Bucket per stretch, empty ones included.
func ReadTimeline(ctx context.Context, rows RowFunc, from, to time.Time, step time.Duration) ([]store.Bucket, error) {
	if step < time.Millisecond || !to.After(from) {
		return nil, fmt.Errorf("timeline of %s to %s by %s: not a timeline", from, to, step)
	}
	n := int((to.Sub(from) + step - 1) / step)
	out := make([]store.Bucket, n)
	for i := range out {
		out[i].Start = from.Add(time.Duration(i) * step).UTC().Truncate(time.Millisecond)
	}
	err := rows(ctx, statsTimelineSQL, []any{Millis(from), Millis(to), step.Milliseconds()}, func(scan func(...any) error) error {
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
