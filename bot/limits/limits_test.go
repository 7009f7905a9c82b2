package limits_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot/limits"
	"github.com/mcpgram/mcpgram/internal/testenv"
)

// Two instances count one user together: what one allowed, the other
// does not allow again, and the first refusal in a row warns.
func TestUsersShared(t *testing.T) {
	dsn := testenv.Postgres(t)
	a := limits.NewUsers(2, testenv.OpenPostgres(t, dsn), slog.New(slog.DiscardHandler))
	b := limits.NewUsers(2, testenv.OpenPostgres(t, dsn), slog.New(slog.DiscardHandler))
	type got struct{ ok, warn bool }
	var seq []got
	for _, u := range []*limits.Users{a, b, a, b} {
		ok, warn := u.Allow(t.Context(), 7)
		seq = append(seq, got{ok, warn})
	}
	want := []got{{true, false}, {true, false}, {false, true}, {false, false}}
	for i := range want {
		if seq[i] != want[i] {
			t.Fatalf("four messages through two instances: got %v, want %v", seq, want)
		}
	}
}

// A store that cannot be asked leaves the count to the instance, with a
// warning in the log, instead of refusing everyone.
func TestUsersFallBack(t *testing.T) {
	db := testenv.OpenPostgres(t, testenv.Postgres(t))
	_ = db.Close()
	log := &testenv.Buffer{}
	u := limits.NewUsers(2, db, slog.New(slog.NewTextHandler(log, nil)))
	var oks int
	for range 3 {
		if ok, _ := u.Allow(t.Context(), 7); ok {
			oks++
		}
	}
	if oks != 2 {
		t.Errorf("allowed %d of 3 messages with the store down, want 2 (the local count)", oks)
	}
	if !strings.Contains(log.String(), "shared rate limit unavailable") {
		t.Errorf("no warning logged:\n%s", log.String())
	}
}
