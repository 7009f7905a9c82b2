package storetest

import (
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A user's tokens today and this month, written alone and with a turn,
// by UTC day, and kept across a reopen.
func testUsageTodayAndMonth(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	now := time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)
	yesterday := now.AddDate(0, 0, -1)
	lastMonth := time.Date(2026, 2, 28, 23, 59, 0, 0, time.UTC)
	// Written alone, as a turn without messages does.
	_, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c0", Usage: []store.Usage{
		{UserID: "u1", Model: "m1", At: now, In: 100, Out: 10},
		{UserID: "u1", Model: "m1", At: now.Add(time.Hour), In: 50, Out: 5},
		{UserID: "u1", Model: "m2", At: now, In: 7, Out: 3, Estimated: true},
		{UserID: "u1", Model: "m1", At: yesterday, In: 1000, Out: 100},
		{UserID: "u1", Model: "m1", At: lastMonth, In: 99999, Out: 1},
		{UserID: "u2", Model: "m1", At: now, In: 1, Out: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Written with a turn's messages, in its transaction.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{
		ChatID:   "c1",
		Messages: []store.Message{{Role: "user", Content: "hi"}},
		Usage:    []store.Usage{{UserID: "u1", Model: "m1", At: now, In: 20, Out: 2}},
	}); err != nil {
		t.Fatal(err)
	}

	want := store.UserUsage{
		Today: store.Tokens{Calls: 4, In: 177, Out: 20, EstimatedIn: 7, EstimatedOut: 3},
		Month: store.Tokens{Calls: 5, In: 1177, Out: 120, EstimatedIn: 7, EstimatedOut: 3},
	}
	for _, step := range []string{"open", "reopened"} {
		if step == "reopened" {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = open(t)
		}
		got, err := db.UserUsage(ctx, "u1", now.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: UserUsage = %+v, want %+v", step, got, want)
		}
		if day, err := db.DayUsage(ctx, "u1", now.Add(2*time.Hour)); err != nil || day != want.Today {
			t.Errorf("%s: DayUsage = %+v, %v; want %+v", step, day, err, want.Today)
		}
	}
	if got, _ := db.UserUsage(ctx, "u1", now.In(time.FixedZone("far east", 14*3600)).Add(15*time.Hour)); got.Today.Calls != 0 {
		t.Errorf("UserUsage the next UTC day: today = %+v, want nothing", got.Today)
	}
	if got, _ := db.UserUsage(ctx, "nobody", now); got != (store.UserUsage{}) {
		t.Errorf("UserUsage of a user without calls = %+v, want zero", got)
	}
	if got, err := db.DayUsage(ctx, "nobody", now); err != nil || got != (store.Tokens{}) {
		t.Errorf("DayUsage of a user without calls = %+v, %v; want zero", got, err)
	}
	if got := want.Today.Total(); got != 197 {
		t.Errorf("Total = %d, want 197", got)
	}
}
