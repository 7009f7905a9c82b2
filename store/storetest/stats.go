package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A window's turns, model calls, tool calls and top users, with the
// percentiles by nearest rank, the window's edges (from included, to
// excluded), and the same numbers after a reopen.
func testStats(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	to := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	from := to.Add(-24 * time.Hour)
	in := from.Add(time.Hour)
	outside := []time.Time{from.Add(-time.Millisecond), to}

	// m1: 20 calls of 1..20 ms and 2 timeouts of 100 and 200 ms, which
	// count in its latency; a cancelled call of 5 s, which does not.
	var fast, slow []store.ModelCall
	for i := 1; i <= 20; i++ {
		c := store.ModelCall{Outcome: "ok", Duration: time.Duration(i) * time.Millisecond, In: 100, Out: 10, FirstTry: 1}
		if i <= 10 {
			fast = append(fast, c)
		} else {
			slow = append(slow, c)
		}
	}
	failing := []store.ModelCall{
		{Outcome: "timeout", Duration: 100 * time.Millisecond}, {Outcome: "timeout", Duration: 200 * time.Millisecond},
		{Outcome: "cancelled", Duration: 5 * time.Second, In: 1},
	}
	huge := []store.ModelCall{{Outcome: "ok", Duration: time.Millisecond, In: 99999}}
	for _, r := range []store.TurnRecord{
		{UserID: "u1", Outcome: "answer", Model: "m1", Calls: fast, At: from},
		{UserID: "u1", Outcome: "answer", Model: "m1", Calls: slow, At: in},
		{UserID: "u2", Outcome: "answer", Model: "m1", Calls: failing, At: in},
		{UserID: "u1", Outcome: "error", Kind: "rate_limited", At: in},
		{UserID: "u1", Outcome: "error", Kind: "format", At: in}, {UserID: "u1", Outcome: "error", Kind: "format", At: in},
		{UserID: "u1", Outcome: "limit", At: in}, {UserID: "u1", Outcome: "cancelled", At: in},
		{UserID: "u4", Outcome: "answer", Model: "m3", Calls: huge, At: outside[0]},
		{UserID: "u4", Outcome: "error", Kind: "internal", Model: "m3", Calls: huge, At: outside[1]},
	} {
		r.TurnID, r.ChatID = "t", "c1"
		if err := db.RecordTurn(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// The turn's last write may carry its record.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c2", Messages: []store.Message{{Role: "user", Content: "hi"}},
		Turn: &store.TurnRecord{TurnID: "t", UserID: "u3", ChatID: "c2", Outcome: "question", Model: "m2", At: from, Calls: []store.ModelCall{
			{Outcome: "ok", Duration: 7 * time.Millisecond, In: 3000, Out: 300, FirstTry: 1, Repaired: 1, FedBack: 2},
		}}}); err != nil {
		t.Fatal(err)
	}

	// s/t: ran 10, 20, 30, 40 ms ok and 50 ms failed; one denied, one
	// expired; a cancelled call counts as neither.
	for _, c := range []store.ToolCall{
		{Status: "ok", Duration: 40 * time.Millisecond}, {Status: "ok", Duration: 10 * time.Millisecond},
		{Status: "error", Duration: 50 * time.Millisecond}, {Status: "ok", Duration: 30 * time.Millisecond},
		{Status: "ok", Duration: 20 * time.Millisecond}, {Status: "denied"}, {Status: "expired"},
		{Status: "cancelled", Duration: time.Second},
		{Server: "a", Tool: "b", Status: "ok", Duration: 3 * time.Millisecond},
		{Status: "error", Duration: time.Hour, CreatedAt: outside[0]},
		{Status: "error", Duration: time.Hour, CreatedAt: outside[1]},
	} {
		if c.Server == "" {
			c.Server, c.Tool = "s", "t"
		}
		if c.CreatedAt.IsZero() {
			c.CreatedAt = in
		}
		if err := db.RecordToolCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	want := store.Stats{
		From: from, To: to,
		Turns:  []store.Count{{Name: "answer", N: 3}, {Name: "error", N: 3}, {Name: "cancelled", N: 1}, {Name: "limit", N: 1}, {Name: "question", N: 1}},
		Errors: []store.Count{{Name: "format", N: 2}, {Name: "limit", N: 1}, {Name: "rate_limited", N: 1}},
		Models: []store.ModelStats{
			// 22 durations: rank ceil(0.5*22) = 11 is 11 ms, ceil(0.95*22) = 21 is 100 ms.
			{Model: "m1", Calls: 23, Failures: []store.Count{{Name: "timeout", N: 2}}, P50: 11 * time.Millisecond, P95: 100 * time.Millisecond,
				FirstTry: 20, Blocks: 20, In: 2001, Out: 200},
			{Model: "m2", Calls: 1, P50: 7 * time.Millisecond, P95: 7 * time.Millisecond, FirstTry: 1, Blocks: 4, In: 3000, Out: 300},
		},
		Tools: []store.ToolStats{
			// 5 ran: rank 3 is 30 ms, rank 5 is 50 ms.
			{Server: "s", Tool: "t", Calls: 5, Failed: 1, Denied: 2, P50: 30 * time.Millisecond, P95: 50 * time.Millisecond},
			{Server: "a", Tool: "b", Calls: 1, P50: 3 * time.Millisecond, P95: 3 * time.Millisecond},
		},
		TopUsers: []store.UserTokens{
			{UserID: "u3", Tokens: store.Tokens{Calls: 1, In: 3000, Out: 300}},
			{UserID: "u1", Tokens: store.Tokens{Calls: 20, In: 2000, Out: 200}},
		},
	}
	for _, step := range []string{"open", "reopened"} {
		if step == "reopened" {
			db = reopen(t, db, open)
		}
		got, err := db.Stats(ctx, from, to, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Stats =\n%+v\nwant\n%+v", step, got, want)
		}
	}
	if got, err := db.Stats(ctx, from, to, 0); err != nil || got.TopUsers != nil {
		t.Errorf("Stats with top 0: users %+v, %v; want none", got.TopUsers, err)
	}
}

// An empty window has no numbers; PruneStats deletes only what is older
// than its bound, and keeps the audit log.
func testStatsEmptyAndPrune(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	now := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	got, err := db.Stats(ctx, now.Add(-time.Hour), now, 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := (store.Stats{From: now.Add(-time.Hour), To: now}); !reflect.DeepEqual(got, want) {
		t.Errorf("Stats of an empty database = %+v, want %+v", got, want)
	}

	old, recent := now.AddDate(0, 0, -31), now.AddDate(0, 0, -29)
	for _, at := range []time.Time{old, recent} {
		if err := db.RecordTurn(ctx, store.TurnRecord{Outcome: "answer", At: at}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "hi"}},
			Turn: &store.TurnRecord{Outcome: "answer", Model: "m", At: at, Calls: []store.ModelCall{{Outcome: "ok"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordToolCall(ctx, store.ToolCall{Server: "s", Tool: "t", Status: "ok", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.PruneStats(ctx, now.AddDate(0, 0, -30))
	if err != nil || n != 2 {
		t.Fatalf("PruneStats = %d, %v; want the 2 old turns", n, err)
	}
	got, err = db.Stats(ctx, old.Add(-time.Hour), now, 5)
	if err != nil {
		t.Fatal(err)
	}
	if store.Total(got.Turns) != 2 || len(got.Models) != 1 || got.Models[0].Calls != 1 {
		t.Errorf("after the prune: turns %+v, models %+v; want the 2 recent turns and one call only", got.Turns, got.Models)
	}
	if len(got.Tools) != 1 || got.Tools[0].Calls != 2 {
		t.Errorf("after the prune: tools %+v; want both audit rows kept", got.Tools)
	}
	if n, err := db.PruneStats(ctx, now.AddDate(0, 0, -30)); err != nil || n != 0 {
		t.Errorf("PruneStats again = %d, %v; want 0", n, err)
	}
}

// A timeline has one bucket per step, empty ones included, the last one
// cut short by the window's end; each turn in the bucket its time falls in.
func testTimeline(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	from := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	to := from.Add(3*time.Hour + 30*time.Minute)
	for _, r := range []store.TurnRecord{
		{Outcome: "answer", At: from}, {Outcome: "answer", At: from.Add(time.Hour - time.Millisecond)},
		{Outcome: "error", At: from.Add(time.Hour)},
		{Outcome: "answer", At: from.Add(3*time.Hour + 29*time.Minute)}, {Outcome: "cancelled", At: from.Add(3 * time.Hour)},
		{Outcome: "answer", At: from.Add(-time.Millisecond)}, {Outcome: "answer", At: to},
	} {
		if err := db.RecordTurn(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.Timeline(ctx, from, to, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Bucket{
		{Start: from, Turns: []store.Count{{Name: "answer", N: 2}}},
		{Start: from.Add(time.Hour), Turns: []store.Count{{Name: "error", N: 1}}},
		{Start: from.Add(2 * time.Hour)},
		{Start: from.Add(3 * time.Hour), Turns: []store.Count{{Name: "answer", N: 1}, {Name: "cancelled", N: 1}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Timeline =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := db.Timeline(ctx, to, from, time.Hour); err == nil {
		t.Error("Timeline of a window that ends before it starts: no error")
	}
}
