package agent_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/internal/llmfake"
	"github.com/mcpgram/mcpgram/store"
)

// writeLog is a store that records the agent's writes, in order.
type writeLog struct {
	*store.DB
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) log(what string) {
	w.mu.Lock()
	w.writes = append(w.writes, what)
	w.mu.Unlock()
}

func (w *writeLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

func (w *writeLog) AppendTurn(ctx context.Context, tw store.TurnWrite) (int64, error) {
	w.log("AppendTurn")
	return w.DB.AppendTurn(ctx, tw)
}

func (w *writeLog) RecordToolCall(ctx context.Context, c store.ToolCall) error {
	w.log("RecordToolCall")
	return w.DB.RecordToolCall(ctx, c)
}

func (w *writeLog) ResolvePending(ctx context.Context, id int64, resolution string) error {
	w.log("ResolvePending")
	return w.DB.ResolvePending(ctx, id, resolution)
}

func (w *writeLog) CreatePending(ctx context.Context, p store.Pending) (int64, error) {
	w.log("CreatePending")
	return w.DB.CreatePending(ctx, p)
}

func (w *writeLog) ResetConversation(ctx context.Context, chatID string) (int64, error) {
	w.log("ResetConversation")
	return w.DB.ResetConversation(ctx, chatID)
}

func logWrites(w *writeLog) func(*agent.Config) {
	return func(c *agent.Config) {
		w.DB = c.Store.(*store.DB)
		c.Store = w
	}
}

// A tool round trip commits twice, in a new chat too: the user's message,
// the reply, the result and the audit row together, then the answer.
// Nothing is written before the model's first reply.
func TestToolRoundTripWritesTwice(t *testing.T) {
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
		before := len(w.all())
		if got := e.say(text).last(t); got.Kind != agent.EventAnswer {
			t.Fatalf("turn %d: %+v", i, got)
		}
		if got, want := w.all()[before:], []string{"AppendTurn", "AppendTurn"}; !slices.Equal(got, want) {
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

// Calls that run in parallel are each audited as they return, before the
// batch's outcome is stored.
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
	if got, want := w.all(), []string{"RecordToolCall", "RecordToolCall", "AppendTurn", "AppendTurn"}; !slices.Equal(got, want) {
		t.Errorf("writes %v, want %v", got, want)
	}
	if a := e.audit(); len(a) != 2 {
		t.Errorf("audit = %+v, want two calls", a)
	}
}
