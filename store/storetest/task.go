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

// taskAt is a task of chat on server with handle, due at base+due.
func taskAt(handle, chat string, base time.Time, due time.Duration) store.Task {
	return store.Task{
		Server: "everything", Handle: handle, Tool: "simulate-research-query", ChatID: chat, UserID: "u-" + chat,
		TurnID: "turn-" + handle, CallID: "call-" + handle, ReplyTo: 77, Status: "working", StatusMessage: "Gathering sources...",
		NextPoll: base.Add(due), Deadline: base.Add(time.Hour), CreatedAt: base,
	}
}

// Tasks are kept whole, read back from any handle and after a reopen,
// listed open by next poll and by chat; a handle stored twice keeps its
// first task; updates change only open tasks.
func testTasks(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := map[string]int64{}
	for _, tk := range []store.Task{taskAt("h1", "c1", base, 3*time.Second), taskAt("h2", "c2", base, time.Second), taskAt("h3", "c1", base, 2*time.Second)} {
		id, err := db.PutTask(ctx, tk)
		if err != nil || id == 0 {
			t.Fatalf("PutTask(%s) = %d, %v", tk.Handle, id, err)
		}
		ids[tk.Handle] = id
	}
	again := taskAt("h1", "c9", base, 10*time.Second)
	again.UserID = "u-c1"
	if id, err := db.PutTask(ctx, again); err != nil || id != ids["h1"] {
		t.Errorf("PutTask of a stored handle = %d, %v; want %d", id, err, ids["h1"])
	}
	// The same handle of another user is another task.
	again.UserID = "someone else"
	if id, err := db.PutTask(ctx, again); err != nil || id == ids["h1"] {
		t.Errorf("PutTask of another user's handle = %d, %v; want a new id", id, err)
	}

	db = reopen(t, db, open)
	want := taskAt("h1", "c1", base, 3*time.Second)
	want.ID = ids["h1"]
	if got, err := db.GetTask(ctx, ids["h1"]); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("GetTask after a reopen = %+v, %v;\nwant %+v", got, err, want)
	}
	if _, err := db.GetTask(ctx, 999999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTask of an unknown id = %v, want ErrNotFound", err)
	}
	if got := taskHandles(t)(db.OpenTasks(ctx, 3)); !reflect.DeepEqual(got, []string{"h2", "h3", "h1"}) {
		t.Errorf("OpenTasks(3) = %v, want by next poll: h2 h3 h1", got)
	}
	if got := taskHandles(t)(db.OpenTasks(ctx, 0)); len(got) != 4 {
		t.Errorf("OpenTasks(0) = %v, want all four", got)
	}
	if got := taskHandles(t)(db.ChatTasks(ctx, "c1")); !reflect.DeepEqual(got, []string{"h1", "h3"}) {
		t.Errorf("ChatTasks(c1) = %v, want h1 h3", got)
	}

	other := open(t) // a second handle, as another instance would have
	next := base.Add(time.Minute)
	if err := other.UpdateTask(ctx, ids["h1"], "input_required", "Which one?", next); err != nil {
		t.Fatal(err)
	}
	if err := other.SetTaskCard(ctx, ids["h1"], 4242); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetTask(ctx, ids["h1"])
	if err != nil || got.Status != "input_required" || got.StatusMessage != "Which one?" || !got.NextPoll.Equal(next) || got.CardID != 4242 || !got.Open() {
		t.Errorf("GetTask after an update = %+v, %v", got, err)
	}
	if got := taskHandles(t)(db.OpenTasks(ctx, 0)); got[len(got)-1] != "h1" {
		t.Errorf("OpenTasks after h1's next poll moved = %v, want h1 last", got)
	}
	for _, err := range []error{
		db.UpdateTask(ctx, 999999, "working", "", next),
		db.SetTaskCard(ctx, 999999, 1),
		db.FinishTask(ctx, 999999, "completed", "", nil),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a write of an unknown task = %v, want ErrNotFound", err)
		}
	}
}

// A task is finished once, whoever tries at the same time; a finished
// task keeps its outcome, leaves the open lists, refuses updates, and is
// pruned once old.
func testTaskFinish(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Now().UTC().Truncate(time.Millisecond)
	id, err := db.PutTask(ctx, taskAt("h1", "c1", base, 0))
	if err != nil {
		t.Fatal(err)
	}
	onceOfMany(t, "FinishTask", []Store{db, open(t), open(t), open(t)}, func(h Store) error {
		return h.FinishTask(ctx, id, "completed", "done", []byte(`{"text":"report"}`))
	})
	got, err := db.GetTask(ctx, id)
	if err != nil || got.Open() || got.Status != "completed" || got.StatusMessage != "done" || string(got.Outcome) != `{"text":"report"}` {
		t.Errorf("GetTask of a finished task = %+v, %v", got, err)
	}
	if err := db.UpdateTask(ctx, id, "working", "", base); !errors.Is(err, store.ErrResolved) {
		t.Errorf("UpdateTask of a finished task = %v, want ErrResolved", err)
	}
	if got := taskHandles(t)(db.OpenTasks(ctx, 0)); len(got) != 0 {
		t.Errorf("OpenTasks = %v, want none", got)
	}
	if got := taskHandles(t)(db.ChatTasks(ctx, "c1")); len(got) != 0 {
		t.Errorf("ChatTasks = %v, want none", got)
	}
	open2, err := db.PutTask(ctx, taskAt("h2", "c1", base, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.PruneTasks(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Errorf("PruneTasks = %d, %v; want 1 (the finished one)", n, err)
	}
	if _, err := db.GetTask(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTask of a pruned task = %v, want ErrNotFound", err)
	}
	if _, err := db.GetTask(ctx, open2); err != nil {
		t.Errorf("GetTask of an open task after a prune = %v", err)
	}
}

// taskHandles takes what a list of tasks returned and gives their
// handles, failing t on an error.
func taskHandles(t *testing.T) func(ts []store.Task, err error) []string {
	return func(ts []store.Task, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range ts {
			out = append(out, tk.Handle)
		}
		return out
	}
}

// A finished task is delivered by the turn write that hands its outcome
// to the conversation, once: of several writes that try, from any
// handles, one goes in whole and the others store nothing.
func testTaskDelivery(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	base := time.Now().UTC().Truncate(time.Millisecond)
	id, err := db.PutTask(ctx, taskAt("h1", "c1", base, 0))
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(s Store, text string) error {
		_, err := s.AppendTurn(ctx, store.TurnWrite{ChatID: "c1", DeliverTask: id, Messages: []store.Message{{Role: "tool", Content: text}}})
		return err
	}
	if err := deliver(db, "too soon"); !errors.Is(err, store.ErrResolved) {
		t.Errorf("delivering an open task = %v, want ErrResolved", err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c1", DeliverTask: 999999}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delivering an unknown task = %v, want ErrNotFound", err)
	}
	if err := db.FinishTask(ctx, id, "completed", "", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := taskHandles(t)(db.UndeliveredTasks(ctx)); len(got) != 1 || got[0] != "h1" {
		t.Fatalf("UndeliveredTasks = %v, want h1", got)
	}
	onceOfMany(t, "delivery", []Store{db, open(t), open(t), open(t)}, func(h Store) error { return deliver(h, "outcome") })
	conv := Active(t, db, "c1")
	msgs, err := db.Messages(ctx, conv)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "outcome" {
		t.Errorf("messages = %+v, %v; want the one delivery's, and nothing of the refused writes", msgs, err)
	}
	if got := taskHandles(t)(db.UndeliveredTasks(ctx)); len(got) != 0 {
		t.Errorf("UndeliveredTasks after the delivery = %v, want none", got)
	}
	if got, err := db.GetTask(ctx, id); err != nil || !got.Delivered() {
		t.Errorf("GetTask after the delivery = %+v, %v", got, err)
	}
}

// onceOfMany runs try on every handle at the same time and fails t unless
// exactly one succeeds and every other is refused with ErrResolved.
func onceOfMany(t *testing.T, what string, handles []Store, try func(Store) error) {
	t.Helper()
	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Go(func() { errs[i] = try(h) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrResolved):
			t.Errorf("%s %d = %v, want nil or ErrResolved", what, i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d %s calls succeeded, want exactly 1", won, len(handles), what)
	}
}

// /stats counts the window's tasks by how they ended, "running" for the
// open ones, and the ended ones' durations by nearest rank; a task
// started outside the window is not counted.
func testTaskStats(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	// FinishTask ends a task at the store's now: the tasks start hours
	// before it, so that their durations are known to within the test's
	// own run time.
	now := time.Now()
	ends := map[string]string{"h1": "completed", "h2": "completed", "h3": "failed", "h4": "", "h5": "completed"}
	for i, handle := range []string{"h1", "h2", "h3", "h4", "h5"} {
		started := now.Add(-time.Duration(i+1) * time.Hour)
		id, err := db.PutTask(ctx, taskAt(handle, "c1", started, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if end := ends[handle]; end != "" {
			if err := db.FinishTask(ctx, id, end, "", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// h5 started 5 hours ago, before the window.
	got, err := db.Stats(ctx, now.Add(-4*time.Hour-time.Minute), now.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Count{{Name: "completed", N: 2}, {Name: "failed", N: 1}, {Name: "running", N: 1}}
	if !reflect.DeepEqual(got.Tasks.Outcomes, want) {
		t.Errorf("task outcomes %+v, want %+v", got.Tasks.Outcomes, want)
	}
	// Ended after 1, 2 and 3 hours: rank 2 of 3 is the p50, rank 3 the p95.
	within := func(name string, d, want time.Duration) {
		if d < want || d > want+time.Minute {
			t.Errorf("task %s %v, want %v (within the test's run)", name, d, want)
		}
	}
	within("p50", got.Tasks.P50, 2*time.Hour)
	within("p95", got.Tasks.P95, 3*time.Hour)
}

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
