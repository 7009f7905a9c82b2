package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Leases short enough for a test: a dead instance's tasks move in well
// under a second.
func shortLeases(owner string, e *ends) tasks.Options {
	return tasks.Options{Owner: owner, Lease: 400 * time.Millisecond, RenewEvery: 100 * time.Millisecond,
		MinInterval: 50 * time.Millisecond, Shared: true, Finished: e.finished}
}

// cutOff is the hub of an instance that cannot reach the server: it
// polls, and learns nothing.
type cutOff struct{ tasks.Hub }

func (cutOff) GetTask(context.Context, mcpgram.Caller, string, string) (*mcpgram.Task, error) {
	return nil, errors.New("the server is out of reach")
}

// mortal is the store of an instance that can die: from then on none of
// its writes reaches the database, its lease renewals and its release at
// Close among them.
type mortal struct {
	tasks.Store
	dead atomic.Bool
}

var errDead = errors.New("the instance is dead")

func (m *mortal) RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error) {
	if m.dead.Load() {
		return 0, errDead
	}
	return m.Store.RenewTasks(ctx, owner, ids, until)
}

func (m *mortal) ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]store.Task, error) {
	if m.dead.Load() {
		return nil, errDead
	}
	return m.Store.ClaimTasks(ctx, owner, lapsed, unowned, until)
}

func (m *mortal) FinishTask(ctx context.Context, id int64, status, message string, outcome []byte) error {
	if m.dead.Load() {
		return errDead
	}
	return m.Store.FinishTask(ctx, id, status, message, outcome)
}

// Two instances on one PostgreSQL database: the one polling a task stops
// renewing its lease (it dies: cut off from the database, then closed
// without finishing the task), and the
// other, which left the task alone while that lease lived, takes it over
// once it lapsed and finishes it, once.
func TestLeaseTakeover(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dsn := testenv.Postgres(t)
	dbA, dbB := testenv.OpenPostgres(t, dsn), testenv.OpenPostgres(t, dsn)
	task := f.research(t, dbA, "otters", bob)
	var endsA, endsB ends
	storeA := &mortal{Store: dbA}
	a := start(t, storeA, cutOff{f.hub}, shortLeases("a", &endsA))
	if err := a.Follow(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
	b := start(t, dbB, f.hub, shortLeases("b", &endsB))
	// Five ticks each: half a second, past a lease, renewed by a.
	testenv.Eventually(t, 10*time.Second, "five lease ticks of each", func() bool { return a.Ticks() >= 5 && b.Ticks() >= 5 })
	got, err := dbB.GetTask(context.Background(), task.ID)
	if err != nil || got.Owner != "a" || !got.Open() || b.Following() != 0 {
		t.Fatalf("while a renews: task owned by %q, open %v, %v; b follows %d; want a's, open, b following none",
			got.Owner, got.Open(), err, b.Following())
	}
	if a.Renewals() == 0 {
		t.Error("a never renewed its lease")
	}
	storeA.dead.Store(true)
	_ = a.Close()
	testenv.Eventually(t, 30*time.Second, "b finishing the task", func() bool { return len(endsB.all()) > 0 })
	got, err = dbB.GetTask(context.Background(), task.ID)
	if err != nil || got.Open() || got.Owner != "b" {
		t.Fatalf("after the takeover: %+v, %v; want finished, b's", got, err)
	}
	if o := endsB.all(); len(o) != 1 || o[0].End != tasks.EndCompleted || !strings.Contains(o[0].Text, "otters") {
		t.Errorf("b's ends = %+v, want the research, completed, once", o)
	}
	if o := endsA.all(); len(o) != 0 {
		t.Errorf("a's ends = %+v, want none", o)
	}
}

// keepLocalOf stores an in-process call of another process, held by
// owner until until.
func keepLocalOf(t *testing.T, db putter, handle, owner string, until time.Time) int64 {
	t.Helper()
	id, err := db.PutTask(context.Background(), store.Task{Server: "slow", Handle: handle, Tool: "wait", ChatID: bob.ChatID,
		UserID: bob.UserID, Status: string(mcpgram.TaskWorking), NextPoll: time.Now(), Owner: owner, LeaseUntil: until})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The in-process calls of other instances: one whose owner's lease lapsed
// was cut short with that instance, and is told interrupted; one whose
// owner's lease lives runs there, and is left alone.
func TestLeaseLocalCallsOfOthers(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t, "")
	gone := keepLocalOf(t, db, "in-process 00000000000000aa 1", "dead", time.Now().Add(-time.Second))
	alive := keepLocalOf(t, db, "in-process 00000000000000bb 1", "alive", time.Now().Add(time.Hour))
	var e ends
	p := start(t, db, nil, shortLeases("me", &e))
	testenv.Eventually(t, 10*time.Second, "the lost call's end", func() bool { return len(e.all()) > 0 })
	ticks := p.Ticks()
	testenv.Eventually(t, 10*time.Second, "three more lease ticks", func() bool { return p.Ticks() >= ticks+3 })
	if o := e.all(); len(o) != 1 || o[0].End != tasks.EndInterrupted {
		t.Errorf("ends = %+v, want one interrupted", o)
	}
	if got, err := db.GetTask(context.Background(), gone); err != nil || got.Open() || got.Status != tasks.EndInterrupted {
		t.Errorf("the lapsed owner's call = %+v, %v; want finished, interrupted", got, err)
	}
	if got, err := db.GetTask(context.Background(), alive); err != nil || !got.Open() || got.Owner != "alive" {
		t.Errorf("the live owner's call = %+v, %v; want open, still alive's", got, err)
	}
}

// Alone on a SQLite file, a poller that starts takes every open task at
// once, a lease held by the process before it included: a restart does
// not wait for the old process's leases to lapse.
func TestLeaseRestartTakesAllAtOnce(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t, "")
	keepLocalOf(t, db, "in-process 00000000000000cc 1", "before the restart", time.Now().Add(time.Hour))
	var e ends
	p := start(t, db, nil, tasks.Options{Finished: e.finished}) // default leases: 30 s
	testenv.Eventually(t, 10*time.Second, "the call cut short by the restart told", func() bool { return len(e.all()) > 0 })
	if p.Ticks() != 0 {
		t.Errorf("%d lease ticks before the call was taken over, want it taken at the start", p.Ticks())
	}
}

// leaseWrites is a store that counts the lease writes, and the ids each
// renewal carried.
type leaseWrites struct {
	*sqlite.DB
	mu               sync.Mutex
	renewals, claims int
	renewed          []int
	updates          atomic.Int64
}

func (l *leaseWrites) RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error) {
	l.mu.Lock()
	l.renewals++
	l.renewed = append(l.renewed, len(ids))
	l.mu.Unlock()
	return l.DB.RenewTasks(ctx, owner, ids, until)
}

func (l *leaseWrites) ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]store.Task, error) {
	l.mu.Lock()
	l.claims++
	l.mu.Unlock()
	return l.DB.ClaimTasks(ctx, owner, lapsed, unowned, until)
}

func (l *leaseWrites) UpdateTask(ctx context.Context, id int64, status, message string, next time.Time) error {
	l.updates.Add(1)
	return l.DB.UpdateTask(ctx, id, status, message, next)
}

// A thousand tasks followed cost one renewal a tick, which renews them
// all, and a claim: two writes, not one a task; Close hands them back in
// one more.
func TestLeaseRenewalIsOneWrite(t *testing.T) {
	t.Parallel()
	db := &leaseWrites{DB: testenv.SQLite(t, "")}
	const n = 1000
	later := time.Now().Add(time.Hour) // none due: no poll, no hub
	for i := range n {
		if _, err := db.PutTask(context.Background(), store.Task{Server: "s", Handle: fmt.Sprint("t", i), Tool: "x",
			ChatID: bob.ChatID, UserID: bob.UserID, Status: "working", NextPoll: later}); err != nil {
			t.Fatal(err)
		}
	}
	var e ends
	p := start(t, db, nil, tasks.Options{Lease: 300 * time.Millisecond, RenewEvery: 50 * time.Millisecond, Finished: e.finished})
	testenv.Eventually(t, 10*time.Second, "three lease ticks", func() bool { return p.Ticks() >= 3 })
	_ = p.Close()
	db.mu.Lock()
	defer db.mu.Unlock()
	if p.Following() != n {
		t.Errorf("following %d tasks, want %d", p.Following(), n)
	}
	if int64(db.renewals) != p.Ticks()+1 || int64(db.claims) != p.Ticks()+1 {
		t.Errorf("%d ticks wrote %d renewals and %d claims, want one each a tick, the start's claim and the release at Close",
			p.Ticks(), db.renewals, db.claims)
	}
	for i, ids := range db.renewed {
		if ids != n {
			t.Errorf("renewal %d renewed %d tasks, want all %d", i, ids, n)
		}
	}
	if u := db.updates.Load(); u != 0 {
		t.Errorf("%d task updates, want none", u)
	}
}

// A poller closed hands its leases back: another instance takes its
// tasks at its next tick, however long the leases had to run.
func TestLeaseReleasedAtClose(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t, "")
	id, err := db.PutTask(context.Background(), store.Task{Server: "s", Handle: "t1", Tool: "x", ChatID: bob.ChatID,
		UserID: bob.UserID, Status: "working", NextPoll: time.Now().Add(time.Hour)}) // not due: no poll, no hub
	if err != nil {
		t.Fatal(err)
	}
	long := func(owner string) tasks.Options {
		return tasks.Options{Owner: owner, Lease: time.Hour, RenewEvery: 50 * time.Millisecond, Shared: true}
	}
	a := start(t, db, nil, long("a"))
	if err := a.Follow(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	b := start(t, db, nil, long("b"))
	testenv.Eventually(t, 10*time.Second, "three lease ticks of b", func() bool { return b.Ticks() >= 3 })
	if b.Following() != 0 {
		t.Fatalf("b follows %d tasks while a holds the only one, want none", b.Following())
	}
	_ = a.Close()
	testenv.Eventually(t, 10*time.Second, "b following the task a handed back", func() bool { return b.Following() == 1 })
	if got, err := db.GetTask(context.Background(), id); err != nil || got.Owner != "b" {
		t.Errorf("the task after a's close = owner %q, %v; want b's", got.Owner, err)
	}
}

// A task found waiting for input when the poller takes it (the bot
// restarted, or the instance that asked died, before its user answered)
// is told as changed at once, so that its question is asked again, not
// only at the task's next change.
func TestInputAskedAgainWhenTaken(t *testing.T) {
	t.Parallel()
	db := testenv.SQLite(t, "")
	id, err := db.PutTask(context.Background(), store.Task{Server: "tasks", Handle: "task-1", Tool: "ask", ChatID: bob.ChatID,
		UserID: bob.UserID, Status: string(mcpgram.TaskInputRequired), NextPoll: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan store.Task, 2)
	start(t, db, nil, tasks.Options{Changed: func(t store.Task) { changed <- t }})
	select {
	case got := <-changed:
		if got.ID != id || got.Status != string(mcpgram.TaskInputRequired) {
			t.Errorf("told of task %d %s, want %d waiting for input", got.ID, got.Status, id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task waiting for input was not told at the start")
	}
}
