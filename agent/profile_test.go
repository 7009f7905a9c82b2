package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// twoProfiles gives the env's agent a second profile, "local", on a
// server of its own with the llama prompt and no vision; the env's own
// model is "default" (generic, vision).
func twoProfiles(t *testing.T, local *llmfake.Server) func(*wiring) {
	return func(w *wiring) {
		w.Temperature, w.ContextTokens, w.Vision = 0.5, 32000, true
		w.Others = []agent.Model{newModel(t, local, mcpgram.Profile{Name: "local", Model: "llama-local", Temperature: 0.1, ContextTokens: 8000, Prompt: string(mcpgram.PromptLlama), ToolCalling: mcpgram.ToolCallingXML})}
	}
}

// newModel is a client of p on srv.
func newModel(t *testing.T, srv *llmfake.Server, p mcpgram.Profile) *llm.Client {
	t.Helper()
	p.BaseURL = srv.URL()
	c, err := llm.New(p, llm.Options{Backoff: time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A chat's profile picks the endpoint, the model name, the temperature
// and the prompt's variant of its next turn; other chats keep theirs; the
// tokens are counted under the profile's model.
func TestProfilePerChat(t *testing.T) {
	t.Parallel()
	local := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from local") })
	m := metrics.New()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from default") }, setup{config: func(cfg *wiring) {
		twoProfiles(t, local)(cfg)
		cfg.Metrics = m
	}})
	if got := e.say("hello").last(t).Text; got != "from default" {
		t.Fatalf("first answer = %q", got)
	}
	ctx := t.Context()
	if p, err := agent.NewPrefs(e.agent).ChatProfile(ctx, alice.ChatID); err != nil || p.Name != "default" {
		t.Fatalf("ChatProfile of a new chat = %q, %v", p.Name, err)
	}
	if err := agent.NewPrefs(e.agent).SetChatProfile(ctx, alice.ChatID, "local"); err != nil {
		t.Fatal(err)
	}
	if got := e.say("again").last(t).Text; got != "from local" {
		t.Fatalf("answer after switching = %q, want the local server's", got)
	}
	calls := local.Calls()
	if len(calls) != 1 {
		t.Fatalf("local server got %d calls, want 1", len(calls))
	}
	req := calls[0].Request
	if req.Model != "llama-local" || req.Temperature == nil || *req.Temperature < 0.099 || *req.Temperature > 0.101 {
		t.Errorf("local call: model %q, temperature %v; want llama-local, 0.1", req.Model, req.Temperature)
	}
	if sys := req.Messages[0].Content; !strings.HasPrefix(sys, prompt.BuildVariant(e.hub.Catalog(), mcpgram.PromptLlama)) {
		t.Errorf("local call's system prompt is not the llama variant:\n%.300s", sys)
	}
	if sys := e.model.Calls()[0].Request.Messages[0].Content; !strings.HasPrefix(sys, prompt.Build(e.hub.Catalog())) {
		t.Errorf("default call's system prompt is not the generic variant:\n%.300s", sys)
	}
	if len(req.Messages) != 4 || req.Messages[1].Content != "hello" {
		t.Errorf("local call's history = %d messages, want the chat's whole conversation", len(req.Messages))
	}

	bob := mcpgram.Caller{UserID: "222", ChatID: "600"}
	r, err := e.turn(agent.Request{Caller: bob, Text: "hi"})
	if err != nil || r.last(t).Text != "from default" {
		t.Errorf("another chat: %v, %q; want the default", err, r.last(t).Text)
	}
	st, err := e.db.Stats(ctx, e.now.Add(-time.Hour), e.now.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	for _, m := range st.Models {
		models[m.Model] = m.In > 0
	}
	if !models["fake"] || !models["llama-local"] {
		t.Errorf("tokens by model = %+v, want fake and llama-local", st.Models)
	}
	for model, want := range map[string]float64{"fake": 2, "llama-local": 1} {
		if got := sample(t, m, "mcpgram_model_calls_total", "model", model, "outcome", "ok"); got != want {
			t.Errorf("model calls of %s = %v, want %v", model, got, want)
		}
	}
	if err := agent.NewPrefs(e.agent).SetChatProfile(ctx, alice.ChatID, "gpt-9"); !errors.Is(err, agent.ErrUnknownProfile) {
		t.Errorf("SetChatProfile of an unknown profile = %v, want ErrUnknownProfile", err)
	}
}

// A chat whose profile is no longer configured is answered by the default
// and told so once.
func TestProfileGoneFallsBackOnce(t *testing.T) {
	t.Parallel()
	local := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from local") })
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("from default") }, setup{config: twoProfiles(t, local)})
	if err := e.db.SetChatProfile(t.Context(), alice.ChatID, "removed"); err != nil {
		t.Fatal(err)
	}
	r := e.say("hello")
	if got := r.last(t).Text; got != "from default" {
		t.Fatalf("answer = %q, want the default's", got)
	}
	notes := r.kinds(agent.EventNotice)
	if len(notes) != 1 || !strings.Contains(notes[0].Text, `"removed"`) || !strings.Contains(notes[0].Text, `"default"`) {
		t.Errorf("notices = %+v, want one naming the removed profile and the default", notes)
	}
	if got := len(e.say("again").kinds(agent.EventNotice)); got != 0 {
		t.Errorf("the second turn has %d notices, want none: the chat was told once", got)
	}
	if name, _ := e.db.ChatProfile(t.Context(), alice.ChatID); name != "" {
		t.Errorf("stored profile = %q, want it cleared", name)
	}
}

// A profile without vision gets no images; the user is told.
func TestProfileWithoutVision(t *testing.T) {
	t.Parallel()
	local := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("a caption") })
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("a cat") }, setup{config: twoProfiles(t, local)})
	photo := []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG fake")}}
	r, err := e.turn(agent.Request{Caller: alice, Text: "what is this?", Images: photo})
	if err != nil || len(r.kinds(agent.EventNotice)) != 0 {
		t.Fatalf("default profile: %v, notices %+v", err, r.kinds(agent.EventNotice))
	}
	if got := e.model.Calls()[0].Request.Messages; len(got[len(got)-1].Images) != 1 {
		t.Errorf("the default (vision) got %d images, want 1", len(got[len(got)-1].Images))
	}
	if err := agent.NewPrefs(e.agent).SetChatProfile(t.Context(), alice.ChatID, "local"); err != nil {
		t.Fatal(err)
	}
	r, err = e.turn(agent.Request{Caller: alice, Text: "and this?", Images: photo})
	if err != nil {
		t.Fatal(err)
	}
	if notes := r.kinds(agent.EventNotice); len(notes) != 1 || !strings.Contains(notes[0].Text, "cannot see images") {
		t.Errorf("notices = %+v, want one saying the model cannot see images", notes)
	}
	for _, m := range local.Calls()[0].Request.Messages {
		if len(m.Images) > 0 {
			t.Errorf("a model without vision got an image in %q", m.Content)
		}
	}
}

// The context budget is the profile's: a small one leaves old turns out.
func TestProfileContextBudget(t *testing.T) {
	t.Parallel()
	local := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("ok") })
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text(strings.Repeat("long answer ", 3000)) }, setup{config: twoProfiles(t, local)})
	e.say("first")
	if err := agent.NewPrefs(e.agent).SetChatProfile(t.Context(), alice.ChatID, "local"); err != nil {
		t.Fatal(err)
	}
	e.say("second")
	msgs := local.Calls()[0].Request.Messages
	for _, m := range msgs {
		if m.Content == "first" {
			t.Errorf("the 8000-token profile got the 36 KB turn before: %d messages", len(msgs))
		}
	}
}

func TestProfilesChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(), setup{})
	a := fakeModel{Name: "a", Model: "m"}
	tests := []struct {
		name   string
		models []agent.Model
		def    string
		want   string
	}{
		{"none", nil, "", "no model"},
		{"nil", []agent.Model{nil}, "", "model 0 is nil"},
		{"no name", []agent.Model{fakeModel{Model: "m"}}, "", "profile 0 has no name"},
		{"two of a name", []agent.Model{a, a}, "", `two profiles named "a"`},
		{"no model name", []agent.Model{fakeModel{Name: "a"}}, "", `profile "a" has no model name`},
		{"negative budget", []agent.Model{fakeModel{Name: "a", Model: "m", ContextTokens: -1}}, "", "context tokens -1 is negative"},
		{"unknown default", []agent.Model{a}, "b", `default profile "b"`},
		{"unknown variant", []agent.Model{fakeModel{Name: "a", Model: "m", Prompt: "poem"}}, "", `variant "poem"`},
		{"unknown tool calling", []agent.Model{fakeModel{Name: "a", Model: "m", ToolCalling: "functions"}}, "", "not xml, native or auto"},
	}
	for _, tt := range tests {
		if _, err := agent.New(e.db, e.hub, tt.models, agent.Options{DefaultProfile: tt.def}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// A fakeModel is a profile that is never called.
type fakeModel mcpgram.Profile

func (m fakeModel) Profile() mcpgram.Profile { return mcpgram.Profile(m) }

func (fakeModel) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("not called")
}
