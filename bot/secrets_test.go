package bot_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// memoryStack is the bot with the bundled memory server, auto-approved as
// the repository's settings have it, and a model that searches memory
// when asked to and answers without quoting what it found.
func memoryStack(t *testing.T) *stack {
	t.Helper()
	dir := t.TempDir()
	s := &stack{t: t, fake: tgfake.New(t)}
	s.settings = testenv.WriteSettings(t, dir, map[string]any{
		"memory": map[string]any{
			"command": testenv.Bundled(t, "mcp-memory"), "autoApprove": []string{"memory"},
			// A folder of its own: its sandbox lets it write nowhere the
			// bot's files are.
			"env": map[string]string{"MEMORY_DB_PATH": filepath.Join(t.TempDir(), "memory.db")},
		},
	})
	s.hub = testenv.StartHub(t, s.settings, hub.Options{NoWatch: true})
	testenv.Running(t, s.hub)
	var err error
	if s.db, err = sqlite.Open(t.Context(), filepath.Join(dir, "mcpgram.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.db.Close() })
	s.model = llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		switch {
		case strings.Contains(last, "] Result:"):
			return llmfake.Text(complete("I looked in your memories."))
		case strings.Contains(last, "search my memories"):
			args, _ := json.Marshal(map[string]any{"operation": "search", "query": "PIN"})
			return llmfake.Text(useTool("memory", "memory", string(args)))
		}
		return llmfake.Text(complete("Hello!"))
	})
	s.agent = newAgent(t, s.db, s.hub, s.model, nil)
	return s
}

// remember stores text as user's memory, with their consent, as a
// consent card would.
func remember(t *testing.T, h *hub.Hub, user, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.CallTool(ctx, mcpgram.Caller{UserID: user, ChatID: user, Consent: true}, "memory", "memory",
		map[string]any{"operation": "store", "content": text})
	if err != nil || res.IsError {
		t.Fatalf("store a memory: %v %+v", err, res)
	}
}

// In a group, what a per-user tool (the memory server's) found for one
// member is kept out of every other member's turns: Bob's model request
// never holds Alice's memory, while the group's conversation (what was
// said and answered in it) stays shared, and Alice's own next turn still
// has her result.
func TestE2EGroupKeepsEachMembersSecrets(t *testing.T) {
	const group = -42
	s := memoryStack(t)
	remember(t, s.hub, "2", "Alice's PIN is 4711")
	h := s.start(nil)

	s.fake.Text(group, alice, "@mcpgram_bot search my memories please")
	waitText(t, s.fake, group, "I looked in your memories.")
	calls := s.model.Calls()
	if got := calls[len(calls)-1].Request.Last(); !strings.Contains(got, "4711") {
		t.Fatalf("Alice's search did not find her memory: %q", got)
	}
	s.fake.Text(group, bob, "@mcpgram_bot hello from Bob")
	waitText(t, s.fake, group, "Hello!")
	s.fake.Text(group, alice, "@mcpgram_bot and hello from Alice")
	s.fake.WaitFor(t, 30*time.Second, "Alice's second answer", func() bool { return countText(s.fake, group, "Hello!") == 2 })
	waitHandled(t, h)

	calls = s.model.Calls()
	bobs, alices := calls[len(calls)-2].Request, calls[len(calls)-1].Request
	all := func(r llmfake.Request) string {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
		return b.String()
	}
	if got := all(bobs); strings.Contains(got, "4711") || strings.Contains(got, "PIN is") {
		t.Errorf("Bob's model request holds Alice's memory:\n%s", got)
	} else if !strings.Contains(got, "search my memories please") || !strings.Contains(got, "I looked in your memories.") {
		t.Errorf("Bob's model request lacks the group's conversation:\n%s", got)
	}
	if got := all(alices); !strings.Contains(got, "4711") {
		t.Errorf("Alice's next model request lacks her own result:\n%s", got)
	}
}
