package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A call that becomes a task ends its wait at once: the model is told its
// result comes later and answers, the turn ends while the task still
// runs, and the task is kept with whom and what it is for.
func TestTaskFreesTheTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("everything", "simulate-research-query", `{"topic": "bees"}`)),
		llmfake.Text(complete("The research runs; I will tell you.")),
	), setup{
		servers: map[string]any{"everything": testenv.EverythingEntry(t, "simulate-research-query")},
		config: func(w *wiring) {
			w.Options.Executor.Tasks = w.Hub.(*hub.Hub)
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
