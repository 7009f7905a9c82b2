package sqlite_test

import (
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// The usage queries run as prepared statements, as the turn's own writes
// do (the behaviour is in package storetest, which both engines run).
func TestUsagePrepared(t *testing.T) {
	db, _ := open(t)
	now := time.Now()
	if _, err := db.AppendTurn(t.Context(), store.TurnWrite{ChatID: "c", Usage: []store.Usage{{UserID: "u", Model: "m", In: 1, Out: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserUsage(t.Context(), "u", now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DayUsage(t.Context(), "u", now); err != nil {
		t.Fatal(err)
	}
	if n := sqlite.Unprepared(db); n != 0 {
		t.Errorf("%d statements ran unprepared", n)
	}
}
