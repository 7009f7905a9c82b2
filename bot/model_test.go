package bot_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// twoModels is a real agent with two profiles, each on a fake endpoint of
// its own: "default" (model-a, generic prompt, 0.5) and "local"
// (model-b, llama prompt, 0.1); names picks which are configured.
type twoModels struct {
	t      *testing.T
	hub    *hub.Hub
	dbPath string
	a, b   *llmfake.Server
}

func newTwoModels(t *testing.T) *twoModels {
	dir := t.TempDir()
	return &twoModels{
		t:      t,
		hub:    testenv.StartHub(t, testenv.WriteSettings(t, dir, map[string]any{"echo": testenv.EchoEntry(t)}), hub.Options{NoWatch: true}),
		dbPath: filepath.Join(dir, "mcpgram.db"),
		a:      llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from A") }),
		b:      llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from B") }),
	}
}

// open opens the database and an agent on it, as a new process would.
func (m *twoModels) open(names ...string) (*agent.Agent, *sqlite.DB) {
	t := m.t
	t.Helper()
	db, err := sqlite.Open(t.Context(), m.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]mcpgram.Profile{
		"default": {Name: "default", BaseURL: m.a.URL(), Model: "model-a", Temperature: 0.5, ContextTokens: 32000},
		"local":   {Name: "local", BaseURL: m.b.URL(), Model: "model-b", Temperature: 0.1, ContextTokens: 8000, Prompt: string(mcpgram.PromptLlama)},
	}
	var models []agent.Model
	for _, n := range names {
		c, err := llm.New(all[n], llm.Options{Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, c)
	}
	a, err := agent.New(db, m.hub, models, agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a, db
}

func button(t *testing.T, m tgfake.Message, prefix string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b, prefix) {
			return strings.SplitN(b, "=", 2)[1]
		}
	}
	t.Fatalf("no button %q in %q", prefix, m.Buttons())
	return ""
}

// /model switches a chat to another profile: its next turn reaches the
// other endpoint with that profile's model, temperature and prompt
// variant; the choice survives a restart; a removed profile falls back to
// the default, saying so once.
func TestModelSwitch(t *testing.T) {
	m := newTwoModels(t)
	a, db := m.open("default", "local")
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, true, a, m.hub, nil)

	fake.Text(alice, alice, "hello")
	waitText(t, fake, alice, "from A")
	fake.Text(alice, alice, "/model")
	view := waitText(t, fake, alice, "Model for this chat")
	if got := view.Buttons(); len(got) != 2 || got[0] != "✅ default · model-a=m:default" || got[1] != "local · model-b=m:local" {
		t.Fatalf("buttons %q", got)
	}
	if ans := waitAnswer(t, fake, fake.Press(alice, alice, view.ID, "m:local")); ans.ShowAlert || !strings.Contains(ans.Text, "local") {
		t.Errorf("the press: %+v", ans)
	}
	fake.Text(alice, alice, "again")
	waitText(t, fake, alice, "from B")
	calls := m.b.Calls()
	if len(calls) != 1 {
		t.Fatalf("endpoint B got %d calls, want 1", len(calls))
	}
	req := calls[0].Request
	if req.Model != "model-b" || req.Temperature == nil || *req.Temperature < 0.099 || *req.Temperature > 0.101 {
		t.Errorf("endpoint B got model %q, temperature %v; want model-b, 0.1", req.Model, req.Temperature)
	}
	if !strings.HasPrefix(req.Messages[0].Content, prompt.BuildVariant(m.hub.Catalog(), mcpgram.PromptLlama)) {
		t.Errorf("endpoint B's system prompt is not the llama variant:\n%.200s", req.Messages[0].Content)
	}
	if got := m.a.Calls()[0].Request; got.Model != "model-a" || !strings.HasPrefix(got.Messages[0].Content, prompt.Build(m.hub.Catalog())) {
		t.Errorf("endpoint A got model %q and not the generic prompt", got.Model)
	}

	// A restart: a new agent and bot on the same database.
	hs.stop()
	a, db = m.open("default", "local")
	hs = startBotWith(t, fake, db, true, a, m.hub, nil)
	fake.Text(alice, alice, "after the restart")
	fake.WaitFor(t, 30*time.Second, "a second answer from B", func() bool { return countText(fake, alice, "from B") == 2 })
	fake.Text(alice, alice, "/model")
	fake.WaitFor(t, 30*time.Second, "a second /model", func() bool { return countText(fake, alice, "Model for this chat") == 2 })
	if v, _ := lastWith(fake, alice, "Model for this chat"); !strings.Contains(v.Plain, "Now: local (model-b)") {
		t.Errorf("/model after the restart: %q", v.Plain)
	}

	// The operator removes "local".
	hs.stop()
	a, db = m.open("default")
	startBotWith(t, fake, db, true, a, m.hub, nil)
	fake.Text(alice, alice, "and now?")
	waitText(t, fake, alice, `The model "local" this chat chose is no longer configured`)
	fake.WaitFor(t, 30*time.Second, "a second answer from A", func() bool { return countText(fake, alice, "from A") == 2 })
	fake.Text(alice, alice, "once more")
	fake.WaitFor(t, 30*time.Second, "a third answer from A", func() bool { return countText(fake, alice, "from A") == 3 })
	if n := countText(fake, alice, "no longer configured"); n != 1 {
		t.Errorf("told %d times that the model was removed, want once", n)
	}
	fake.Text(alice, alice, "/model")
	waitText(t, fake, alice, "answered by model-a. The operator configured no other models")
}

// In a group, a member who is not an administrator is refused at the
// press; the group's administrator and the bot's admin may switch; button
// data that names no profile, or is not button data, changes nothing.
func TestModelPressAuthorisedWhenPressed(t *testing.T) {
	m := newTwoModels(t)
	a, db := m.open("default", "local")
	fake := tgfake.New(t)
	startBotWith(t, fake, db, true, a, m.hub, nil)
	const group = -77
	stored := func() string {
		t.Helper()
		name, err := db.ChatProfile(t.Context(), "-77")
		if err != nil {
			t.Fatal(err)
		}
		return name
	}

	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "/model"})
	view := waitText(t, fake, group, "Model for this chat")
	local := button(t, view, "local")
	if ans := waitAnswer(t, fake, fake.Press(group, bob, view.ID, local)); !ans.ShowAlert || !strings.Contains(ans.Text, "administrators") {
		t.Errorf("a member's press: %+v", ans)
	}
	if got := stored(); got != "" {
		t.Fatalf("a member switched the group to %q", got)
	}

	fake.SetChatAdmin(group, alice)
	if ans := waitAnswer(t, fake, fake.Press(group, alice, view.ID, local)); ans.ShowAlert {
		t.Errorf("the administrator's press: %+v", ans)
	}
	if got := stored(); got != "local" {
		t.Errorf("after the administrator's press: %q, want local", got)
	}
	if ans := waitAnswer(t, fake, fake.Press(group, admin, view.ID, button(t, view, "✅ default"))); ans.ShowAlert {
		t.Errorf("the bot admin's press: %+v", ans)
	}
	if got := stored(); got != "default" {
		t.Errorf("after the bot admin's press: %q, want default", got)
	}
	// Demoted since her last press: refused at this one.
	fake.RemoveChatAdmin(group, alice)
	if ans := waitAnswer(t, fake, fake.Press(group, alice, view.ID, local)); !ans.ShowAlert {
		t.Errorf("a demoted administrator's press: %+v", ans)
	}
	if got := stored(); got != "default" {
		t.Errorf("a demoted administrator switched the group to %q", got)
	}
	fake.SetChatAdmin(group, alice)

	for _, data := range []string{"m:gpt-9", "m:#0123456789abcdef", "m:local;drop", "m:", "m:" + strings.Repeat("l", 63)} {
		if ans := waitAnswer(t, fake, fake.Press(group, alice, view.ID, data)); !ans.ShowAlert {
			t.Errorf("press with %q: %+v, want an alert", data, ans)
		}
	}
	if got := stored(); got != "default" {
		t.Errorf("hostile presses changed the model to %q", got)
	}
	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "/model@" + tgfake.BotUser.UserName + " hi"})
	fake.WaitFor(t, 30*time.Second, "a second /model", func() bool { return countText(fake, group, "Model for this chat") == 2 })
	if v, _ := lastWith(fake, group, "Model for this chat"); !strings.Contains(v.Plain, "Now: default (model-a)") || !strings.Contains(v.Plain, "administrators can switch") {
		t.Errorf("/model in the group: %q", v.Plain)
	}
}

// With one profile, /model says which model answers and that there is no
// other, with no buttons.
func TestModelOneProfile(t *testing.T) {
	a, h, db, _ := realAgent(t, llmfake.Script())
	fake := tgfake.New(t)
	startBotWith(t, fake, db, false, a, h, nil)
	fake.Text(alice, alice, "/model")
	got := waitText(t, fake, alice, "This chat is answered by fake. The operator configured no other models to choose from.")
	if len(got.Keyboard) != 0 {
		t.Errorf("buttons with one profile: %q", got.Buttons())
	}
}
