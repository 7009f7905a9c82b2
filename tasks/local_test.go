package tasks_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A call stands in for a plain tool call running in this process: it
// ends with its result when the test says, or with its context's error
// when cancelled.
type call struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	result chan string
}

func newCall() *call {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &call{ctx: ctx, cancel: cancel, result: make(chan string, 1)}
}

func (c *call) wait() (*mcpgram.Result, error) {
	select {
	case text := <-c.result:
		return &mcpgram.Result{Content: []mcpgram.Content{{Type: "text", Text: text}}}, nil
	case <-c.ctx.Done():
		return nil, c.ctx.Err()
	}
}

// keepLocal stores an in-process call of bob's with handle.
func keepLocal(t *testing.T, db *sqlite.DB, handle string) store.Task {
	t.Helper()
	st := store.Task{Server: "slow", Handle: handle, Tool: "wait", ChatID: bob.ChatID, UserID: bob.UserID,
		Status: string(mcpgram.TaskWorking), NextPoll: time.Now()}
	var err error
	if st.ID, err = db.PutTask(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The in-process calls a poller adopts end as their calls do: a result,
// a Stop, the poller's Close; one of an earlier process is told
// interrupted; none is ever asked of a server.
func TestLocalCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.SQLite(t, "")
	gone := keepLocal(t, db, "in-process 0123456789abcdef 1")
	done, stopped, cut := keepLocal(t, db, tasks.LocalHandle()), keepLocal(t, db, tasks.LocalHandle()), keepLocal(t, db, tasks.LocalHandle())
	if !tasks.Local(done) || tasks.Local(store.Task{Handle: "task-1"}) {
		t.Fatal("Local does not tell in-process calls from servers' tasks")
	}
	var e ends
	h := &asking{}
	p := tasks.New(db, h, tasks.Options{Finished: e.finished})
	p.Start()
	testenv.Eventually(t, 10*time.Second, "the call of the process gone to end", func() bool { return len(e.all()) == 1 })
	if got := e.all()[0]; got.End != tasks.EndInterrupted {
		t.Errorf("the earlier process's call ended %+v, want interrupted", got)
	}
	calls := map[int64]*call{done.ID: newCall(), stopped.ID: newCall(), cut.ID: newCall()}
	for _, task := range []store.Task{done, stopped, cut} {
		c := calls[task.ID]
		p.Adopt(ctx, task, c.cancel, c.wait)
		if err := p.Follow(ctx, task.ID); err != nil { // as its card does
			t.Fatal(err)
		}
	}
	calls[done.ID].result <- "forty-two"
	testenv.Eventually(t, 10*time.Second, "the call to end", func() bool { return len(e.all()) == 2 })
	if !p.Stop(stopped.ID) || p.Stop(done.ID) || p.Stop(gone.ID) {
		t.Error("Stop: want true for a running call of the process only")
	}
	testenv.Eventually(t, 10*time.Second, "the stopped call to end", func() bool { return len(e.all()) == 3 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{gone.ID: tasks.EndInterrupted, done.ID: tasks.EndCompleted, stopped.ID: tasks.EndCancelled, cut.ID: tasks.EndInterrupted}
	for id, end := range want {
		task, err := db.GetTask(ctx, id)
		if err != nil || task.Open() {
			t.Fatalf("task %d = %+v, %v; want it finished", id, task, err)
		}
		o, err := tasks.DecodeOutcome(task.Outcome)
		if err != nil || o.End != end {
			t.Errorf("task %d ended %+v, %v; want %s", id, o, err, end)
		}
		if id == done.ID && o.Text != "forty-two" {
			t.Errorf("the result kept = %q, want the call's", o.Text)
		}
	}
	if n := len(e.all()); n != 4 {
		t.Errorf("Finished told %d times, want 4: once a call", n)
	}
	if got := h.asked(); len(got) != 0 {
		t.Errorf("servers asked about in-process calls for chats %v", got)
	}
	// Adopted after Close, a call is cut short at once.
	late := newCall()
	p.Adopt(ctx, keepLocal(t, db, tasks.LocalHandle()), late.cancel, late.wait)
	if context.Cause(late.ctx) == nil {
		t.Error("a call adopted after Close still runs")
	}
}
