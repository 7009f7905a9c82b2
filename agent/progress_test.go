package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func progressEnv(t *testing.T, model llmfake.Handler, interval time.Duration) *env {
	t.Helper()
	return newEnv(t, model, setup{
		servers: map[string]any{"f": testenv.FeaturesEntry(t, false, "index", "wait")},
		config:  func(w *wiring) { w.ProgressInterval = interval },
	})
}

// stopOn runs a turn of alice's, cancelling it as the user's Stop does
// (cause agent.ErrStopped) at the first event of kind.
func stopOn(t *testing.T, e *env, text string, kind agent.EventKind) (*recorder, error) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	r := &recorder{}
	var once sync.Once
	emit := func(ev agent.Event) {
		r.emit(ev)
		if ev.Kind == kind {
			once.Do(func() { cancel(agent.ErrStopped) })
		}
	}
	err := e.agent.Turn(ctx, agent.Request{Caller: alice, Text: text}, emit)
	return r, err
}

// A running call's progress reaches the front end, numbered as its start;
// the user's Stop cancels it on the server, the model is told the user
// stopped it, and the turn ends as stopped, its history and audit whole.
func TestProgressThenStop(t *testing.T) {
	t.Parallel()
	e := progressEnv(t, llmfake.Script(llmfake.Text(useTool("f", "wait", `{}`)), llmfake.Text(complete("next"))), time.Hour)
	r, err := stopOn(t, e, "wait for it", agent.EventToolProgress)
	if !errors.Is(err, agent.ErrStopped) {
		t.Errorf("err = %v, want agent.ErrStopped", err)
	}
	starts, progress := r.kinds(agent.EventToolStart), r.kinds(agent.EventToolProgress)
	if len(starts) != 1 || len(progress) != 1 || len(progress[0].Progress) != 1 {
		t.Fatalf("events %v, want one start and one progress", kindsOf(r.All()))
	}
	p := progress[0].Progress[0]
	if p.Call != starts[0].Call || p.Call != 1 || p.Server != "f" || p.Tool != "wait" || p.Progress.Progress != 1 || p.Total != 4 || p.Message != "waiting" {
		t.Errorf("progress = %+v (start call %d)", p, starts[0].Call)
	}
	if got := r.last(t); got.Kind != agent.EventError || got.Text != "Stopped." {
		t.Errorf("last event = %+v", got)
	}
	h := e.history()
	if len(h) != 4 || h[2].Role != agent.RoleTool || !strings.Contains(h[2].Content, "The user stopped this call") ||
		!strings.Contains(h[3].Content, "stopped before it finished") {
		t.Fatalf("history = %+v, want the message, the call, the stopped call and the stop note", h)
	}
	if a := e.audit(); len(a) != 1 || a[0].Status != "cancelled" {
		t.Errorf("audit = %+v, want the call as cancelled", a)
	}
	// The server saw the cancellation.
	for {
		res, err := e.hub.CallTool(context.Background(), alice, "f", "cancelled", nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text(), `"cancelled":1`) {
			break
		}
	}
	// The model reads, next turn, that the user stopped it.
	if got := e.say("again").last(t); got.Kind != agent.EventAnswer {
		t.Errorf("next turn: %+v", got)
	}
	calls := e.model.Calls()
	told := false
	for _, m := range calls[len(calls)-1].Request.Messages {
		told = told || strings.Contains(m.Content, "The user stopped this call")
	}
	if !told {
		t.Error("the model was not told the user stopped the call")
	}
}

// A thousand reports as fast as a server writes them cost one event per
// interval: with an hour's interval, at most one.
func TestProgressFloodIsCoalesced(t *testing.T) {
	t.Parallel()
	e := progressEnv(t, llmfake.Script(llmfake.Text(useTool("f", "index", `{"flood": 1000, "count": 5}`)), llmfake.Text(complete("done"))), time.Hour)
	r := e.say("index")
	if got := r.last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last = %+v", got)
	}
	if n := len(r.kinds(agent.EventToolProgress)); n > 1 {
		t.Errorf("got %d progress events, want at most 1", n)
	}
	if h := e.history(); !strings.Contains(h[2].Content, "1005 progress notifications sent") {
		t.Errorf("the server did not send its flood: %q", h[2].Content)
	}
}

// A stop that comes as the result does gives the call exactly one
// outcome: its result, or the stop, in the history and in the audit log
// alike.
func TestStopAsTheResultArrives(t *testing.T) {
	t.Parallel()
	e := progressEnv(t, func(llmfake.Call) llmfake.Reply {
		return llmfake.Text(useTool("f", "index", `{"count": 1}`))
	}, 0)
	outcomes := map[string]int{}
	for i := range 20 {
		if _, err := e.db.ResetConversation(context.Background(), alice.ChatID); err != nil {
			t.Fatal(err)
		}
		before := len(e.audit())
		if _, err := stopOn(t, e, "index", agent.EventToolProgress); !errors.Is(err, agent.ErrStopped) {
			// The turn may end before the stop: the result came first,
			// and the model was asked again, and stopped.
			t.Logf("run %d: %v", i, err)
		}
		// A stop that came after the result may find the turn at its
		// next call: each call has its one outcome all the same.
		var tools []store.Message
		for _, m := range e.history() {
			if m.Role == agent.RoleTool && strings.Contains(m.Content, "for 'index'") {
				tools = append(tools, m)
			}
		}
		all := e.audit() // newest first
		audit := all[:len(all)-before]
		if len(tools) == 0 || len(tools) != len(audit) {
			t.Fatalf("run %d: %d outcomes in the history, %d audit rows; want one of each a call", i, len(tools), len(audit))
		}
		stopped, cancelled := 0, 0
		for j, m := range tools {
			switch {
			case strings.Contains(m.Content, "The user stopped this call"):
				stopped++
			case !strings.Contains(m.Content, "indexed 1 of 1"):
				t.Fatalf("run %d: outcome %d is %q", i, j, m.Content)
			}
			if audit[j].Status == "cancelled" {
				cancelled++
			}
			outcomes[audit[j].Status]++
		}
		if stopped != cancelled {
			t.Fatalf("run %d: %d calls stopped in the history, %d in the audit log", i, stopped, cancelled)
		}
	}
	t.Logf("outcomes of 20 stops as the result arrives: %v", outcomes)
}
