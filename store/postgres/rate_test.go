package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The per-user limit is one count for every instance: what one instance
// took, the other cannot take again, and the refusals in a row are
// counted across both.
func TestTakeRateIsShared(t *testing.T) {
	t.Parallel()
	a, b := instances(t)
	ctx := t.Context()
	const every, burst = time.Hour, 3 // nothing refills during the test
	take := func(name string, i int) int {
		db := a
		if i%2 == 1 {
			db = b
		}
		n, err := db.TakeRate(ctx, name, every, burst)
		if err != nil {
			t.Fatalf("TakeRate: %v", err)
		}
		return n
	}
	var got []int
	for i := range 6 {
		got = append(got, take("user:7", i))
	}
	want := []int{0, 0, 0, 1, 2, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("refusals of six takes alternating between instances: got %v, want %v", got, want)
		}
	}
	if n := take("user:8", 0); n != 0 {
		t.Errorf("another user's first take: %d refusals, want 0", n)
	}
}

// Allowance comes back with time: one event every `every` after the burst.
func TestTakeRateRefills(t *testing.T) {
	t.Parallel()
	a, _ := open(t)
	ctx := t.Context()
	// A second: the second take comes well within it even on a loaded
	// machine (at 50 ms it did not always, under make test's load).
	const every = time.Second
	start := time.Now()
	if n, _ := a.TakeRate(ctx, "k", every, 1); n != 0 {
		t.Fatalf("first take refused %d", n)
	}
	if n, _ := a.TakeRate(ctx, "k", every, 1); n != 1 && time.Since(start) < every {
		t.Fatalf("second take at once: %d refusals, want 1", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := a.TakeRate(ctx, "k", every, 1)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the allowance never came back")
		}
		time.Sleep(every / 5) // polling for the refill, with a deadline
	}
}

// Bookings from two instances at once form one queue: the n-th booking
// past the burst waits n periods, whichever instance made it.
func TestReserveRateIsShared(t *testing.T) {
	t.Parallel()
	a, b := instances(t)
	ctx := t.Context()
	const every, burst, n = time.Second, 2, 10
	waits := make(chan time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Go(func() {
			d, err := db.ReserveRate(ctx, "telegram:sends", every, burst)
			if err != nil {
				t.Error(err)
			}
			waits <- d
		})
	}
	wg.Wait()
	close(waits)
	// Sorted, the waits are 0, 0, then about 1 s, 2 s, ... 8 s: each
	// booking a period after the one before. The bookings take
	// milliseconds, far less than a period, so each wait is within half
	// a period of its slot.
	slots := make([]bool, n)
	for d := range waits {
		slot := burst - 1 + int((d+every/2)/every)
		if d == 0 {
			slot = -1
			for i := range burst {
				if !slots[i] {
					slot = i
					break
				}
			}
		}
		if slot < 0 || slot >= n || slots[slot] {
			t.Fatalf("wait %v fits no free slot", d)
		}
		slots[slot] = true
	}
}

// Rows whole again before the cut are pruned; those still limiting are not.
func TestPruneRates(t *testing.T) {
	t.Parallel()
	a, _ := open(t)
	ctx := t.Context()
	if _, err := a.TakeRate(ctx, "short", time.Microsecond, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TakeRate(ctx, "long", time.Hour, 1); err != nil {
		t.Fatal(err)
	}
	n, err := a.PruneRates(ctx, time.Now().Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("PruneRates: %d, %v; want 1 row (the short one)", n, err)
	}
	if r, _ := a.TakeRate(ctx, "long", time.Hour, 1); r != 1 {
		t.Errorf("the long row was pruned: take gives %d refusals, want 1", r)
	}
}

// The cost a shared rate adds to each message a user sends (TakeRate) and
// to each message the bot sends (ReserveRate): one statement each.
func BenchmarkRates(b *testing.B) {
	db, err := postgres.Open(b.Context(), testenv.Postgres(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	b.Run("TakeRate", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := db.TakeRate(b.Context(), fmt.Sprintf("user:%d", i%100), time.Millisecond, 20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReserveRate", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.ReserveRate(b.Context(), "telegram:sends", time.Nanosecond, 30); err != nil {
				b.Fatal(err)
			}
		}
	})
}
