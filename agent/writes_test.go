package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// writeLog is a store that records the agent's writes, in order.
type writeLog struct {
	*sqlite.DB
	writes testenv.List[string]
}

func (w *writeLog) AppendTurn(ctx context.Context, tw store.TurnWrite) (int64, error) {
	w.writes.Add("AppendTurn")
	return w.DB.AppendTurn(ctx, tw)
}

func (w *writeLog) RecordToolCall(ctx context.Context, c store.ToolCall) error {
	w.writes.Add("RecordToolCall")
	return w.DB.RecordToolCall(ctx, c)
}

func (w *writeLog) ResolvePending(ctx context.Context, id int64, resolution, by string) error {
	w.writes.Add("ResolvePending")
	return w.DB.ResolvePending(ctx, id, resolution, by)
}

func (w *writeLog) CreatePending(ctx context.Context, p store.Pending) (int64, error) {
	w.writes.Add("CreatePending")
	return w.DB.CreatePending(ctx, p)
}

func (w *writeLog) ResetConversation(ctx context.Context, chatID string) (int64, error) {
	w.writes.Add("ResetConversation")
	return w.DB.ResetConversation(ctx, chatID)
}

func logWrites(w *writeLog) func(*wiring) {
	return func(c *wiring) {
		w.DB = c.Store.(*sqlite.DB)
		c.Store = w
	}
}

// A tool round trip commits three times, in a new chat too: the user's
// message and the reply with its call before the call runs (write-ahead,
// so a crash cannot hide that it was made), the result with its audit row,
// then the answer. Nothing is written before the model's first reply.
func TestToolRoundTripWrites(t *testing.T) {
	t.Parallel()
	w := &writeLog{}
	e := newEnv(t, llmfake.Script(
		llmfake.Text(echo("one")), llmfake.Text(complete("first done")),
		llmfake.Text(echo("two")), llmfake.Text(complete("second done")),
	), setup{config: logWrites(w)})
	if _, err := e.db.CurrentConversation(context.Background(), alice.ChatID); err == nil {
		t.Fatal("a new chat already has a conversation")
	}
	for i, text := range []string{"first", "second"} {
		before := len(w.writes.All())
		if got := e.say(text).last(t); got.Kind != agent.EventAnswer {
			t.Fatalf("turn %d: %+v", i, got)
		}
		if got, want := w.writes.All()[before:], []string{"AppendTurn", "AppendTurn", "AppendTurn"}; !slices.Equal(got, want) {
			t.Errorf("turn %d writes %v, want %v", i, got, want)
		}
	}
	var roles []string
	for _, m := range e.history() {
		roles = append(roles, m.Role)
	}
	want := []string{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}
	if want = append(want, want...); !slices.Equal(roles, want) {
		t.Errorf("history roles %v, want %v", roles, want)
	}
	if a := e.audit(); len(a) != 2 || a[0].Status != "ok" || a[1].Status != "ok" {
		t.Errorf("audit = %+v, want two ok calls", a)
	}
}

// Calls that run in parallel are each audited as they return, after the
// reply that made them and before the batch's outcome is stored.
func TestParallelCallsAuditedAtOnce(t *testing.T) {
	t.Parallel()
	w := &writeLog{}
	e := newEnv(t, llmfake.Script(
		llmfake.Text(echo("a")+"\n"+echo("b")),
		llmfake.Text(complete("both done")),
	), setup{config: logWrites(w)})
	if got := e.say("two at once").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event %+v", got)
	}
	if got, want := w.writes.All(), []string{"AppendTurn", "RecordToolCall", "RecordToolCall", "AppendTurn", "AppendTurn"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if a := e.audit(); len(a) != 2 {
		t.Errorf("audit = %+v, want two calls", a)
	}
}

// The reply with its calls is stored before any call starts: by the time a
// tool is called, the history already shows the call.
func TestCallsAreStoredBeforeTheyRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(llmfake.Text("Echoing.\n"+echo("write-ahead")), llmfake.Text(complete("done"))), setup{})
	var seen []store.Message
	err := e.agent.Turn(context.Background(), agent.Request{Caller: alice, Text: "echo please"}, func(ev agent.Event) {
		if ev.Kind == agent.EventToolStart {
			seen = e.history()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Content != "echo please" || seen[1].Role != agent.RoleAssistant || !strings.Contains(seen[1].Content, "write-ahead") {
		t.Errorf("history when the tool started = %+v, want the message and the reply with its call", seen)
	}
}

// After a crash mid-call, the replayed message does not start the call
// again blindly: the model reads its own call and that the outcome is
// unknown, and the message is not stored twice. A different message after
// such a crash gets the same note first.
func TestCrashMidCallIsReportedNotRepeated(t *testing.T) {
	t.Parallel()
	for _, replay := range []bool{true, false} {
		t.Run(map[bool]string{true: "replayed message", false: "new message"}[replay], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(llmfake.Text("It may have run already; I will not send it twice.")), setup{})
			// What the write-ahead leaves when the bot dies mid-call.
			call := useTool("echo", "echo", `{"message": "send the invoice"}`)
			if _, err := e.db.AppendTurn(context.Background(), store.TurnWrite{ChatID: alice.ChatID, Messages: []store.Message{
				{Role: agent.RoleUser, Content: "send the invoice"},
				{Role: agent.RoleAssistant, Content: "Sending.\n" + call},
			}}); err != nil {
				t.Fatal(err)
			}
			e.restart()
			text := "send the invoice"
			if !replay {
				text = "did it work?"
			}
			r := e.say(text)
			if got := r.last(t); got.Kind != agent.EventAnswer {
				t.Fatalf("last event %+v", got)
			}
			if s := r.kinds(agent.EventToolStart); len(s) != 0 {
				t.Errorf("a tool ran: %+v", s)
			}
			// The model reads its call, then the note (and the new message,
			// joined to it: roles alternate), and the first message once.
			msgs := e.model.Calls()[0].Request.Messages
			var roles []string
			for _, m := range msgs[1:] {
				roles = append(roles, m.Role)
			}
			if want := []string{"user", "assistant", "user"}; !slices.Equal(roles, want) {
				t.Fatalf("roles sent to the model %v, want %v", roles, want)
			}
			want := "[use_mcp_tool for 'echo' on 'echo'] Error:\n" + agent.NoteUnknown
			if !replay {
				want += "\n\ndid it work?"
			}
			if msgs[1].Content != "send the invoice" || msgs[3].Content != want {
				t.Errorf("the model read %q then %q; want the message once, then %q", msgs[1].Content, msgs[3].Content, want)
			}
			if h := e.history(); len(h) != 5-btoi(replay) {
				t.Errorf("history has %d messages, want %d", len(h), 5-btoi(replay))
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
