package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/tasks"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// patience is the tests' BACKGROUND_AFTER: short, so that a call that
// blocks goes on in the background at once.
const patience = 200 * time.Millisecond

// backgroundEnv is newEnv whose agent sends calls past patience on in
// the background, kept by a poller of its own, whose ends it records;
// change wires more.
func backgroundEnv(t *testing.T, model llmfake.Handler, s setup) (*env, *testenv.List[store.Task]) {
	t.Helper()
	var ends testenv.List[store.Task]
	change := s.config
	s.config = func(w *wiring) {
		p := tasks.New(w.Store, w.Hub.(*hub.Hub), tasks.Options{Finished: func(t store.Task, _ tasks.Outcome) { ends.Add(t) }})
		p.Start()
		t.Cleanup(func() { _ = p.Close() })
		w.BackgroundAfter, w.Keeper = patience, p
		if change != nil {
			change(w)
		}
	}
	return newEnv(t, model, s), &ends
}

// A plain call still running past BackgroundAfter frees its turn: the
// model is told it goes on, the turn answers, another turn of the chat
// runs meanwhile, and once the test lets the call end its result is
// delivered by a turn of its own, as a task's end.
func TestCallGoesOnInTheBackground(t *testing.T) {
	t.Parallel()
	e, ends := backgroundEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "meet", `{"n": 2}`)),
		llmfake.Text(complete("It goes on; I will tell you.")),
		llmfake.Text(complete("Hello meanwhile!")),
		llmfake.Text(complete("We met.")),
	), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "meet")}})
	r, err := e.turn(agent.Request{Caller: alice, Text: "meet me", ReplyTo: 77, TurnID: "turn-meet"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Text != "It goes on; I will tell you." {
		t.Fatalf("the turn ended with %+v, want the answer", got)
	}
	started := r.kinds(agent.EventTask)
	if len(started) != 1 || started[0].Task.Tool != "meet" || started[0].Task.Server != "echo" {
		t.Fatalf("task events = %+v, want one, of meet", started)
	}
	if got := e.model.Calls()[1].Request.Last(); !strings.Contains(got, "[use_mcp_tool for 'meet' on 'echo'] Result:\n"+agent.CallInBackground) {
		t.Errorf("the model read %q, want that the call goes on in the background", got)
	}
	ctx := context.Background()
	id := started[0].Task.ID
	kept, err := e.db.GetTask(ctx, id)
	if err != nil || !kept.Open() || !tasks.Local(kept) || kept.ReplyTo != 77 || kept.TurnID != "turn-meet" {
		t.Fatalf("kept = %+v, %v; want an open in-process call replying to 77", kept, err)
	}
	if chat, err := e.db.ChatTasks(ctx, alice.ChatID); err != nil || len(chat) != 1 {
		t.Errorf("the chat's tasks = %+v, %v; want the call (/tasks lists it)", chat, err)
	}
	if got := e.say("hi").last(t).Text; got != "Hello meanwhile!" {
		t.Errorf("a turn while the call runs ended %q", got)
	}
	if len(ends.All()) != 0 {
		t.Fatal("the call ended before the test let it")
	}
	// The second meet lets the first one go.
	if res, err := e.hub.CallTool(ctx, alice, "echo", "meet", map[string]any{"n": 2}); err != nil || res.Text() != "met" {
		t.Fatalf("the test's meet = %v, %v", res, err)
	}
	testenv.Eventually(t, 10*time.Second, "the call's end", func() bool { return len(ends.All()) == 1 })
	d, err := e.turn(agent.Request{Caller: alice, Task: id})
	if err != nil || d.last(t).Text != "We met." {
		t.Fatalf("the delivery = %v, %+v", err, d.All())
	}
	if got := e.model.Calls()[3].Request.Last(); !strings.Contains(got, "The background task of this call is done. Its result:") || !strings.Contains(got, "met") {
		t.Errorf("the delivery's model read %q, want the call's result", got)
	}
	if audit := e.audit(); len(audit) != 1 || audit[0].Tool != "meet" || audit[0].Status != "ok" {
		t.Errorf("audit = %+v, want the call, ok, once it ended", audit)
	}
}

// The Stop of a call in the background cancels it at its server, which
// is told (notifications/cancelled), and its end says so.
func TestCallInTheBackgroundStopped(t *testing.T) {
	t.Parallel()
	var keeper *tasks.Poller
	e, ends := backgroundEnv(t, llmfake.Script(
		llmfake.Text(useTool("f", "wait", `{}`)),
		llmfake.Text(complete("It goes on.")),
	), setup{
		servers: map[string]any{"f": testenv.FeaturesEntry(t, false, "wait")},
		config:  func(w *wiring) { keeper = w.Keeper.(*tasks.Poller) },
	})
	r := e.say("wait")
	started := r.kinds(agent.EventTask)
	if len(started) != 1 {
		t.Fatalf("task events = %+v, want one", started)
	}
	if !keeper.Stop(started[0].Task.ID) {
		t.Fatal("Stop found no call running")
	}
	testenv.Eventually(t, 10*time.Second, "the call's end", func() bool { return len(ends.All()) == 1 })
	o, err := tasks.DecodeOutcome(ends.All()[0].Outcome)
	if err != nil || o.End != tasks.EndCancelled {
		t.Errorf("the call ended %+v, %v; want cancelled", o, err)
	}
	res, err := e.hub.CallTool(context.Background(), alice, "f", "cancelled", nil)
	if err != nil || !strings.Contains(res.Text(), `"cancelled":1`) {
		t.Errorf("the server's cancelled calls: %v, %v; want 1", res, err)
	}
	if audit := e.audit(); len(audit) != 1 || audit[0].Status != "cancelled" {
		t.Errorf("audit = %+v, want the call, cancelled", audit)
	}
}

// A call that waits for its user's answer to a form does not run out of
// patience meanwhile: answered after longer than BackgroundAfter, it
// ends in its turn.
func TestCallWaitingForItsUserStaysInItsTurn(t *testing.T) {
	t.Parallel()
	e, _ := backgroundEnv(t, toolThenDone("book", "{}"), setup{
		servers: map[string]any{"f": testenv.FeaturesEntry(t, false, "book")},
		elicit:  true,
		config:  func(w *wiring) { w.FormPoll = 20 * time.Millisecond },
	})
	front := newFormFront()
	done := e.startTurn("book me a table", front)
	f := <-front.forms
	shown := time.Now()
	// The time the form is open is what the test is about: longer than the
	// patience, the call must still be waited for.
	testenv.Eventually(t, 10*time.Second, "the form open past the patience", func() bool { return time.Since(shown) > 3*patience })
	input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormDecline})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := front.kinds(agent.EventTask); len(got) != 0 {
		t.Errorf("task events = %+v, want none: the call waited for its user", got)
	}
	if last := front.last(t); !strings.Contains(last.Text, `{"action":"decline","content":null}`) {
		t.Errorf("the turn ended %q, want the call's result", last.Text)
	}
}
