package limits_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot/limits"
	"github.com/mcpgram/mcpgram/testkit/testenv"
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

// A clock is a time that tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// crowd sends one message from each of n users, ids from first on, and
// checks each was allowed.
func crowd(t *testing.T, u *limits.Users, first int64, n int) {
	t.Helper()
	for id := first; id < first+int64(n); id++ {
		if ok, _ := u.Allow(t.Context(), id); !ok {
			t.Fatalf("user %d's first message refused", id)
		}
	}
}

// Users whose buckets are full again are forgotten once enough users
// were counted, and a user forgotten is limited as before: counted from a
// full bucket, which is where it was. A user still within its minute is
// kept, refusals, warning and all.
func TestUsersForgetIdle(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	u := limits.NewUsers(3, nil, slog.New(slog.DiscardHandler)) // a message every 20 s
	u.SetClock(c.now)
	type got struct{ ok, warn bool }
	send := func(n int) []got {
		var out []got
		for range n {
			ok, warn := u.Allow(t.Context(), 7)
			out = append(out, got{ok, warn})
		}
		return out
	}
	counted := func(want int) {
		t.Helper()
		if n := u.Counted(); n != want {
			t.Fatalf("counting %d users, want %d", n, want)
		}
	}
	limited := []got{{true, false}, {true, false}, {true, false}, {false, true}}

	crowd(t, u, 1000, limits.SweepFloor-1)
	c.t = c.t.Add(30 * time.Second) // the crowd's buckets are full again
	if s := send(4); !slices.Equal(s, limited) {
		t.Fatalf("four messages at once: got %v, want %v", s, limited)
	}
	counted(limits.SweepFloor)
	c.t = c.t.Add(time.Second)
	crowd(t, u, 5000, 1) // the sweep: the crowd goes, user 7 stays
	counted(2)
	if s := send(1); s[0] != (got{false, false}) {
		t.Errorf("user 7 after a sweep within its minute: got %v, want refused without a second warning", s)
	}

	// A minute on, user 7's bucket is full: the next sweep forgets it,
	// and it gets the three of a new minute and no more.
	c.t = c.t.Add(time.Minute)
	crowd(t, u, 6000, limits.SweepFloor-2)
	counted(limits.SweepFloor)
	crowd(t, u, 8000, 1)
	counted(limits.SweepFloor - 1)
	if s := send(4); !slices.Equal(s, limited) {
		t.Errorf("user 7 forgotten, four messages at once: got %v, want %v", s, limited)
	}
}

// A stranger is told once a minute at most, and the strangers of a
// burst are forgotten once their minute is over.
func TestRefusals(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var r limits.Refusals
	r.SetClock(c.now)
	if !r.Due(7) || r.Due(7) {
		t.Fatal("a stranger's first message, then the next: want told, then not")
	}
	for id := range int64(1000) {
		r.Due(100 + id)
	}
	c.t = c.t.Add(59 * time.Second)
	if r.Due(7) {
		t.Error("told again within the minute")
	}
	c.t = c.t.Add(time.Second)
	if !r.Due(7) {
		t.Error("not told again a minute on")
	}
	if n := r.Remembered(); n != 1 {
		t.Errorf("remembering %d strangers a minute after the burst, want 1", n)
	}
}
