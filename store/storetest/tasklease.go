package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A task's lease: claimed by one owner, renewed by it, taken over once it
// lapses; an unowned task is left to the instance that stored it for as
// long as the caller says; finished tasks are nobody's.
func testTaskLeases(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	ids := map[string]int64{}
	for i, h := range []string{"h1", "h2", "h3"} {
		id, err := db.PutTask(ctx, taskAt(h, "c1", base, time.Duration(3-i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ids[h] = id
	}
	claim := func(s Store, owner string, lapsed, unowned, until time.Duration) []string {
		t.Helper()
		return taskHandles(t)(s.ClaimTasks(ctx, owner, at(lapsed), at(unowned), at(until)))
	}
	if got := claim(db, "a", 0, -time.Millisecond, 30*time.Second); len(got) != 0 {
		t.Errorf("claim of tasks stored after the unowned cut = %v, want none", got)
	}
	if got := claim(db, "a", 0, 0, 30*time.Second); !reflect.DeepEqual(got, []string{"h3", "h2", "h1"}) {
		t.Errorf("claim of the unowned tasks = %v, want all three, soonest poll first", got)
	}
	other := open(t) // another instance's handle
	if got := claim(other, "b", 10*time.Second, 10*time.Second, 40*time.Second); len(got) != 0 {
		t.Errorf("claim while a's leases live = %v, want none", got)
	}
	if _, err := other.ClaimTask(ctx, ids["h1"], "b", at(10*time.Second), at(40*time.Second)); !errors.Is(err, store.ErrLeased) {
		t.Errorf("ClaimTask of a live lease = %v, want ErrLeased", err)
	}
	if n, err := db.RenewTasks(ctx, "a", []int64{ids["h1"], ids["h2"]}, at(60*time.Second)); err != nil || n != 2 {
		t.Errorf("RenewTasks(a, h1 h2) = %d, %v; want 2", n, err)
	}
	if n, err := other.RenewTasks(ctx, "b", []int64{ids["h1"]}, at(90*time.Second)); err != nil || n != 0 {
		t.Errorf("RenewTasks of a lease b does not hold = %d, %v; want 0", n, err)
	}
	// At 45 s h3's lease has lapsed, h1's and h2's were renewed.
	if got := claim(other, "b", 45*time.Second, 45*time.Second, 75*time.Second); !reflect.DeepEqual(got, []string{"h3"}) {
		t.Errorf("claim at 45 s = %v, want h3, whose lease lapsed", got)
	}
	got, err := db.GetTask(ctx, ids["h3"])
	if err != nil || got.Owner != "b" || !got.LeaseUntil.Equal(at(75*time.Second)) {
		t.Errorf("h3 after its takeover = owner %q until %v, %v; want b until %v", got.Owner, got.LeaseUntil, err, at(75*time.Second))
	}
	if got, err := db.ClaimTask(ctx, ids["h1"], "a", at(50*time.Second), at(80*time.Second)); err != nil || got.Owner != "a" || !got.LeaseUntil.Equal(at(80*time.Second)) {
		t.Errorf("ClaimTask of one's own task = %+v, %v; want it, until 80 s", got, err)
	}
	if err := db.FinishTask(ctx, ids["h2"], "completed", "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ClaimTask(ctx, ids["h2"], "b", at(time.Hour), at(time.Hour)); !errors.Is(err, store.ErrResolved) {
		t.Errorf("ClaimTask of a finished task = %v, want ErrResolved", err)
	}
	if _, err := other.ClaimTask(ctx, 999999, "b", at(time.Hour), at(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ClaimTask of an unknown task = %v, want ErrNotFound", err)
	}
	if n, err := db.RenewTasks(ctx, "a", []int64{ids["h2"]}, at(time.Hour)); err != nil || n != 0 {
		t.Errorf("RenewTasks of a finished task = %d, %v; want 0", n, err)
	}
	if got := claim(other, "b", time.Hour, time.Hour, 2*time.Hour); !reflect.DeepEqual(got, []string{"h3", "h1"}) {
		t.Errorf("claim an hour on = %v, want the open ones, h3 (b's own, lapsed) and h1", got)
	}
}

// Instances claiming the same lapsed tasks at once take each task once
// between them.
func testTaskClaimRace(t *testing.T, open Open) {
	ctx := t.Context()
	handles := []Store{open(t), open(t), open(t)}
	base := time.Now().UTC().Truncate(time.Millisecond)
	const n = 30
	for i := range n {
		if _, err := handles[0].PutTask(ctx, taskAt(fmt.Sprint("h", i), "c1", base, 0)); err != nil {
			t.Fatal(err)
		}
	}
	claimed := make([][]store.Task, len(handles))
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() {
			claimed[i], errs[i] = h.ClaimTasks(ctx, fmt.Sprint("owner", i), base, base, base.Add(time.Minute))
		})
	}
	wg.Wait()
	var all []int64
	for i, ts := range claimed {
		if errs[i] != nil {
			t.Fatalf("claim %d: %v", i, errs[i])
		}
		for _, tk := range ts {
			all = append(all, tk.ID)
			if got, err := handles[0].GetTask(ctx, tk.ID); err != nil || got.Owner != fmt.Sprint("owner", i) {
				t.Errorf("task %d claimed by owner%d is %q's, %v", tk.ID, i, got.Owner, err)
			}
		}
	}
	slices.Sort(all)
	if distinct := len(slices.Compact(slices.Clone(all))); len(all) != n || distinct != n {
		t.Errorf("claimed %d tasks (%d distinct) between the instances, want each of %d once", len(all), distinct, n)
	}
}
