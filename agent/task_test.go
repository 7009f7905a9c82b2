package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A call that becomes a task ends its wait at once: the model is told its
// result comes later and answers, the turn ends while the task still
// runs, and the task is kept with whom and what it is for.
func TestTaskFreesTheTurn(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("everything", "simulate-research-query", `{"topic": "bees"}`)),
		llmfake.Text(complete("The research runs; I will tell you.")),
	), setup{
		servers: map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")},
		config: func(w *wiring) {
			w.Options.Executor.Tasks = w.Hub.(*hub.Hub)
			w.Options.Metrics = m
		},
	})
	r, err := e.turn(agent.Request{Caller: alice, Text: "research bees", ReplyTo: 321, TurnID: "turn-bees"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "The research runs; I will tell you." {
		t.Fatalf("last event = %+v, want the answer", got)
	}
	tasks := r.kinds(agent.EventTask)
	if len(tasks) != 1 || tasks[0].Task == nil || tasks[0].Task.ID == 0 || tasks[0].Task.Tool != "simulate-research-query" || tasks[0].Task.Server != "everything" {
		t.Fatalf("task events = %+v, want one", tasks)
	}
	calls := e.model.Calls()
	if len(calls) != 2 {
		t.Fatalf("model called %d times, want 2", len(calls))
	}
	second := calls[1].Request.Messages
	if got := second[len(second)-1].Content; !strings.Contains(got, "[use_mcp_tool for 'simulate-research-query' on 'everything'] Result:\n"+executor.TaskStarted) {
		t.Errorf("the model read %q, want that the call runs as a task", got)
	}

	ctx := context.Background()
	kept, err := e.db.GetTask(ctx, tasks[0].Task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if kept.Handle == "" || kept.ChatID != alice.ChatID || kept.UserID != alice.UserID || kept.ReplyTo != 321 || kept.TurnID != "turn-bees" ||
		kept.Status != "working" || !kept.Open() || kept.Deadline.IsZero() || !kept.NextPoll.After(kept.CreatedAt) {
		t.Errorf("kept task = %+v", kept)
	}
	// The turn did not wait for the task: the server still runs it.
	got, err := e.hub.GetTask(ctx, alice, "everything", kept.Handle)
	if err != nil || got.Status.Final() {
		t.Errorf("the task after the turn = %+v, %v; want it still running", got, err)
	}
	if _, err := e.hub.CancelTask(ctx, alice, "everything", kept.Handle); err != nil {
		t.Errorf("CancelTask: %v", err)
	}
	if audit := e.audit(); len(audit) != 1 || audit[0].Status != "ok" {
		t.Errorf("audit = %+v", audit)
	}
	if n := sample(t, m, "mcpgram_tasks_started_total", "server", "everything"); n != 1 {
		t.Errorf("tasks started = %v, want 1", n)
	}
}

// Without a TaskStarter the agent never sees a task: a tool that requires
// one fails as before.
func TestTaskNotStarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("everything", "simulate-research-query", `{"topic": "bees"}`)),
		llmfake.Text(complete("It failed.")),
	), setup{servers: map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")}})
	r := e.say("research bees")
	if tasks := r.kinds(agent.EventTask); len(tasks) != 0 {
		t.Errorf("task events = %+v, want none", tasks)
	}
	if ends := r.kinds(agent.EventToolEnd); len(ends) != 1 || ends[0].OK {
		t.Errorf("tool ends = %+v, want one failed", ends)
	}
	if open, err := e.db.OpenTasks(context.Background(), 0); err != nil || len(open) != 0 {
		t.Errorf("open tasks = %+v, %v; want none", open, err)
	}
}

// A task's end, once the poller stored it, is handed to the conversation
// by a turn of its own, once; the model carries on from it.
func TestTaskDelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("everything", "simulate-research-query", `{"topic": "wasps"}`)),
		llmfake.Text(complete("The research runs.")),
		llmfake.Text(complete("Here is your report on wasps.")),
	), setup{
		servers: map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")},
		config: func(w *wiring) {
			w.Options.Executor.Tasks = w.Hub.(*hub.Hub)
			w.Options.Now = time.Now // the poller's clock: the task's deadline is real
		},
	})
	r := e.say("research wasps")
	started := r.kinds(agent.EventTask)
	if len(started) != 1 {
		t.Fatalf("task events = %+v, want one", started)
	}
	id := started[0].Task.ID
	var ends testenv.List[tasks.Outcome]
	p := tasks.New(e.db, e.hub, tasks.Options{Finished: func(_ store.Task, o tasks.Outcome) { ends.Add(o) }})
	p.Start()
	t.Cleanup(func() { _ = p.Close() })
	testenv.Eventually(t, 30*time.Second, "the task to end", func() bool { return len(ends.All()) > 0 })
	if o := ends.All()[0]; o.End != tasks.EndCompleted {
		t.Fatalf("the task ended %+v, want completed", o)
	}

	r, err := e.turn(agent.Request{Caller: alice, Task: id})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Here is your report on wasps." {
		t.Fatalf("last event = %+v, want the answer", got)
	}
	calls := e.model.Calls()
	read := calls[len(calls)-1].Request.Messages
	if got := read[len(read)-1].Content; !strings.HasPrefix(got, "[use_mcp_tool for 'simulate-research-query' on 'everything'] Result:\nThe background task of this call is done.") ||
		!strings.Contains(got, "Research Report: wasps") {
		t.Errorf("the model read %q, want the task's result", got)
	}
	if kept, err := e.db.GetTask(context.Background(), id); err != nil || !kept.Delivered() {
		t.Errorf("task after its delivery = %+v, %v", kept, err)
	}
	// Delivered once: a second delivery is stale, and says nothing.
	again, err := e.turn(agent.Request{Caller: alice, Task: id})
	if !errors.Is(err, agent.ErrStale) || len(again.All()) != 0 {
		t.Errorf("a second delivery = %v with %d events, want ErrStale and none", err, len(again.All()))
	}
	if n := len(e.model.Calls()); n != 3 {
		t.Errorf("model called %d times, want 3", n)
	}
}

// A staleTasks store reads every task as not delivered yet, as a turn
// does that read it just before another instance's turn delivered it.
type staleTasks struct{ agent.Store }

func (s staleTasks) GetTask(ctx context.Context, id int64) (store.Task, error) {
	t, err := s.Store.GetTask(ctx, id)
	t.DeliveredAt = time.Time{}
	return t, err
}

// Two turns deliver the same task, the second having read it before the
// first's write: the second's write is refused, and it ends without a
// word to the user (no error, no answer), as stale.
func TestTaskDeliveredMeanwhile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(complete("Here is your report on moths.")),
		llmfake.Text(complete("Here it is again.")),
	), setup{config: func(w *wiring) { w.Store = staleTasks{w.Store} }})
	ctx := context.Background()
	id, err := e.db.PutTask(ctx, store.Task{
		Server: "everything", Handle: "h-moths", Tool: "simulate-research-query", ChatID: alice.ChatID, UserID: alice.UserID,
		TurnID: "turn-moths", CallID: "1", Status: "working", NextPoll: e.clock(), CreatedAt: e.clock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := json.Marshal(tasks.Outcome{End: tasks.EndCompleted, Text: "# Research Report: moths"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.FinishTask(ctx, id, "completed", "", outcome); err != nil {
		t.Fatal(err)
	}
	first, err := e.turn(agent.Request{Caller: alice, Task: id})
	if err != nil || first.last(t).Text != "Here is your report on moths." {
		t.Fatalf("the first delivery = %v, last event %+v; want the answer", err, first.last(t))
	}
	again, err := e.turn(agent.Request{Caller: alice, Task: id})
	if !errors.Is(err, agent.ErrStale) {
		t.Errorf("the second delivery = %v, want ErrStale", err)
	}
	for _, ev := range again.All() {
		if ev.Kind != agent.EventText {
			t.Errorf("the second delivery emitted %+v, want nothing but the model's streamed text", ev)
		}
	}
	if n := len(e.model.Calls()); n != 2 {
		t.Errorf("model called %d times, want 2 (the second delivery got as far as its write)", n)
	}
	for _, m := range e.history() {
		if strings.Contains(m.Content, "again") {
			t.Errorf("the second delivery stored %q", m.Content)
		}
	}
}
