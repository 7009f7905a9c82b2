package tasks_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

// TestMain fails the run if a poller leaves a goroutine behind.
func TestMain(m *testing.M) {
	testenv.Prepare()
	goleak.VerifyTestMain(m)
}

var bob = mcpgram.Caller{UserID: "7", ChatID: "70"}

// counting is a store that counts the writes of open tasks' statuses.
type counting struct {
	*sqlite.DB
	updates atomic.Int64
}

func (c *counting) UpdateTask(ctx context.Context, id int64, status, message string, next time.Time) error {
	c.updates.Add(1)
	return c.DB.UpdateTask(ctx, id, status, message, next)
}

// ends records what Finished was told.
type ends struct {
	mu  sync.Mutex
	got []tasks.Outcome
}

func (e *ends) finished(_ store.Task, o tasks.Outcome) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, o)
}

func (e *ends) all() []tasks.Outcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]tasks.Outcome(nil), e.got...)
}

// A fixture is the hub, running server-everything, that a test's
// subtests share.
type fixture struct {
	hub *hub.Hub
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	settings := testenv.WriteSettings(t, t.TempDir(), map[string]any{"everything": testenv.EverythingEntry(t)})
	h := testenv.StartHub(t, settings, hub.Options{NoWatch: true})
	testenv.Running(t, h)
	return fixture{hub: h}
}

// A putter stores tasks; both engines are ones.
type putter interface {
	PutTask(ctx context.Context, t store.Task) (int64, error)
}

// research starts a research task on the server and stores it.
func (f fixture) research(t *testing.T, db putter, topic string, who mcpgram.Caller) store.Task {
	t.Helper()
	ctx := context.Background()
	_, task, err := f.hub.StartTool(ctx, who, "everything", "simulate-research-query", map[string]any{"topic": topic}, 0)
	if err != nil || task == nil {
		t.Fatalf("StartTool = %+v, %v", task, err)
	}
	st := store.Task{Server: "everything", Handle: task.ID, Tool: "simulate-research-query", ChatID: who.ChatID, UserID: who.UserID,
		Status: string(task.Status), StatusMessage: task.StatusMessage, NextPoll: time.Now(), Deadline: time.Now().Add(time.Minute)}
	if st.ID, err = db.PutTask(ctx, st); err != nil {
		t.Fatal(err)
	}
	return st
}

func start(t *testing.T, st tasks.Store, h tasks.Hub, opts tasks.Options) *tasks.Poller {
	t.Helper()
	p := tasks.New(st, h, opts)
	p.Start()
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestPoller(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	t.Run("completes", func(t *testing.T) {
		t.Parallel()
		db := &counting{DB: testenv.SQLite(t, "")}
		task := f.research(t, db.DB, "otters", bob)
		var e ends
		var changes atomic.Int64
		var mu sync.Mutex
		last := task.StatusMessage
		var repeats []string
		m := metrics.New()
		p := start(t, db, f.hub, tasks.Options{Metrics: m, Finished: e.finished, Changed: func(t store.Task) {
			changes.Add(1)
			mu.Lock()
			defer mu.Unlock()
			if t.StatusMessage == last {
				repeats = append(repeats, last)
			}
			last = t.StatusMessage
		}})
		testenv.Eventually(t, 20*time.Second, "the task to end", func() bool { return len(e.all()) > 0 })
		got := e.all()
		if len(got) != 1 || got[0].End != tasks.EndCompleted || !strings.Contains(got[0].Text, "Research Report: otters") {
			t.Fatalf("ends = %+v, want one completed with the report", got)
		}
		kept, err := db.GetTask(context.Background(), task.ID)
		if err != nil || kept.Open() {
			t.Fatalf("stored task = %+v, %v; want it finished", kept, err)
		}
		if o, err := tasks.DecodeOutcome(kept.Outcome); err != nil || o.Text != got[0].Text {
			t.Errorf("stored outcome = %+v, %v", o, err)
		}
		// A write per change of status, none per poll that learned nothing.
		if n, c := db.updates.Load(), changes.Load(); n != c || n < 2 || n > 4 {
			t.Errorf("%d status writes for %d changes, want one per change, of the 3 stages after the first", n, c)
		}
		mu.Lock()
		if len(repeats) > 0 {
			t.Errorf("changes told that changed nothing: %q", repeats)
		}
		mu.Unlock()
		if p.Polls() < db.updates.Load() {
			t.Errorf("%d polls, %d writes", p.Polls(), db.updates.Load())
		}
		testenv.Eventually(t, 5*time.Second, "the poller to let the task go", func() bool { return p.Following() == 0 })
		want := `
# HELP mcpgram_tasks_finished_total Background tasks that ended, by server and outcome (completed, failed, cancelled, expired, lost, interrupted).
# TYPE mcpgram_tasks_finished_total counter
mcpgram_tasks_finished_total{outcome="completed",server="everything"} 1
`
		if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "mcpgram_tasks_finished_total"); err != nil {
			t.Error(err)
		}
		if n, err := testutil.GatherAndCount(m.Registry, "mcpgram_task_duration_seconds"); err != nil || n != 1 {
			t.Errorf("task duration series = %d, %v; want 1", n, err)
		}
	})

	t.Run("follows a task stored after its start", func(t *testing.T) {
		t.Parallel()
		db := testenv.SQLite(t, "")
		var e ends
		p := start(t, db, f.hub, tasks.Options{Finished: e.finished})
		task := f.research(t, db, "badgers", bob)
		if err := p.Follow(context.Background(), task.ID); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "the task to end", func() bool { return len(e.all()) > 0 })
		if got := e.all(); len(got) != 1 || got[0].End != tasks.EndCompleted {
			t.Errorf("ends = %+v, want one, completed", got)
		}
		if err := p.Follow(context.Background(), 999999); err == nil {
			t.Error("Follow of an unknown task: no error")
		}
	})

	t.Run("restart and two pollers end it once", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "db")
		db := testenv.SQLite(t, path)
		task := f.research(t, db, "moles", bob)
		var e ends
		first := tasks.New(db, f.hub, tasks.Options{Finished: e.finished})
		first.Start()
		testenv.Eventually(t, 10*time.Second, "a first poll", func() bool { return first.Polls() > 0 })
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		// Two pollers of new handles, as restarted instances would have.
		var pollers []*tasks.Poller
		for range 2 {
			pollers = append(pollers, start(t, testenv.SQLite(t, path), f.hub, tasks.Options{Finished: e.finished}))
		}
		// The end is stored before it is told: wait for both pollers to
		// have let the task go, the told end or ends then all in.
		testenv.Eventually(t, 20*time.Second, "the task to end, and both pollers to let it go", func() bool {
			kept, err := db.GetTask(context.Background(), task.ID)
			return err == nil && !kept.Open() && pollers[0].Following() == 0 && pollers[1].Following() == 0
		})
		if got := e.all(); len(got) != 1 || got[0].End != tasks.EndCompleted {
			t.Errorf("ends = %+v, want exactly one, completed", got)
		}
	})

	t.Run("cancelled, lost and expired", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		db := testenv.SQLite(t, "")
		cancelled := f.research(t, db, "voles", bob)
		if _, err := f.hub.CancelTask(ctx, bob, "everything", cancelled.Handle); err != nil {
			t.Fatal(err)
		}
		lost := cancelled
		lost.Handle = "no-such-task"
		if _, err := db.PutTask(ctx, lost); err != nil {
			t.Fatal(err)
		}
		expired := lost
		expired.Handle, expired.Deadline = "expired", time.Now().Add(-time.Second)
		if _, err := db.PutTask(ctx, expired); err != nil {
			t.Fatal(err)
		}
		var e ends
		start(t, db, f.hub, tasks.Options{Finished: e.finished})
		testenv.Eventually(t, 10*time.Second, "three ends", func() bool { return len(e.all()) == 3 })
		seen := map[string]bool{}
		for _, o := range e.all() {
			seen[o.End] = true
		}
		for _, want := range []string{tasks.EndCancelled, tasks.EndLost, tasks.EndExpired} {
			if !seen[want] {
				t.Errorf("ends = %+v, want one %s", e.all(), want)
			}
		}
		if open, err := db.OpenTasks(ctx, 0); err != nil || len(open) != 0 {
			t.Errorf("open tasks = %+v, %v; want none", open, err)
		}
	})

	t.Run("another instance's chat is not polled", func(t *testing.T) {
		t.Parallel()
		db := testenv.SQLite(t, "")
		f.research(t, db, "shrews", bob)
		mine := mcpgram.Caller{UserID: "8", ChatID: "80"}
		f.research(t, db, "voles", mine) // due after bob's
		h := &asking{Hub: f.hub}
		// One worker takes the due tasks in turn: once mine is asked
		// about, bob's turn is over.
		start(t, db, h, tasks.Options{Workers: 1, Holds: func(chat string) bool { return chat == mine.ChatID }})
		testenv.Eventually(t, 10*time.Second, "a poll of the chat held", func() bool { return len(h.asked()) > 0 })
		if got := h.asked(); got[0] != mine.ChatID || slices.Contains(got, bob.ChatID) {
			t.Errorf("chats asked about = %v, want only %s", got, mine.ChatID)
		}
	})
}

// asking is a hub that records whose tasks it was asked about.
type asking struct {
	tasks.Hub
	mu    sync.Mutex
	chats []string
}

func (a *asking) GetTask(ctx context.Context, c mcpgram.Caller, server, id string) (*mcpgram.Task, error) {
	a.mu.Lock()
	a.chats = append(a.chats, c.ChatID)
	a.mu.Unlock()
	return a.Hub.GetTask(ctx, c, server, id)
}

func (a *asking) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.chats)
}
