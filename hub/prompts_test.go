package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The prompts of a server are in the catalog, screened: valid names only,
// sorted, with their arguments; prompts/get and completion/complete reach
// the server in either era.
func TestPrompts(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := elicitHub(t, nil, era.legacy, nil)
			info, _ := h.Catalog().Server("f")
			var names []string
			for _, p := range info.Prompts {
				names = append(names, p.Name)
			}
			if got, want := strings.Join(names, " "), "broken flood greet huge picture"; got != want {
				t.Fatalf("prompts = %q, want %q", got, want)
			}
			if !info.Completions {
				t.Error("Completions = false, want true")
			}
			if len(info.Notes) != 2 {
				t.Errorf("notes = %q, want the two refused names", info.Notes)
			}
			greet, _ := info.Prompt("greet")
			if greet.Title != "Greet someone" || len(greet.Arguments) != 2 || !greet.Arguments[0].Required || greet.Arguments[1].Required {
				t.Errorf("greet = %+v", greet)
			}
			ctx := context.Background()
			caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
			res, err := h.GetPrompt(ctx, caller, "f", "greet", map[string]string{"who": "Ada", "mood": "warmly"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Messages[0].Content.Text != "Please greet Ada, warmly." {
				t.Errorf("greet = %+v", res)
			}
			got, err := h.Complete(ctx, caller, "f", "greet", "who", "a", nil)
			if err != nil || strings.Join(got, ",") != "Ada,Alan" {
				t.Errorf("complete = %q, %v; want Ada,Alan", got, err)
			}
		})
	}
}

// Hostile prompts: arguments missing or not declared, a prompt the
// screen refused, a failing prompts/get, a flood of completions, a huge
// prompt (whole: the front ends bound what they send).
func TestPromptsHostile(t *testing.T) {
	h := elicitHub(t, nil, false, nil)
	ctx := context.Background()
	caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
	if _, err := h.GetPrompt(ctx, caller, "f", "greet", nil); err == nil || !strings.Contains(err.Error(), `"who" is required`) {
		t.Errorf("greet without who: %v", err)
	}
	if _, err := h.GetPrompt(ctx, caller, "f", "greet", map[string]string{"who": "x", "evil": "y"}); err == nil || !strings.Contains(err.Error(), `no argument "evil"`) {
		t.Errorf("greet with evil: %v", err)
	}
	if _, err := h.GetPrompt(ctx, caller, "f", strings.Repeat("n", 200), nil); !errors.Is(err, hub.ErrUnknownPrompt) {
		t.Errorf("refused prompt: %v, want ErrUnknownPrompt", err)
	}
	if _, err := h.GetPrompt(ctx, caller, "f", "broken", nil); err == nil || !strings.Contains(err.Error(), "on fire") {
		t.Errorf("broken: %v", err)
	}
	got, err := h.Complete(ctx, caller, "f", "flood", "word", "", nil)
	if err != nil || len(got) != hub.MaxSuggestions || got[0] != "word0000" {
		t.Errorf("flood = %q, %v; want the first %d plain words", got, err, hub.MaxSuggestions)
	}
	res, err := h.GetPrompt(ctx, caller, "f", "picture", nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range res.Messages {
		kinds = append(kinds, m.Content.Type)
	}
	if strings.Join(kinds, ",") != "text,image,resource" || len(res.Messages[1].Content.Data) == 0 || res.Messages[2].Content.Text != "Be brief." {
		t.Errorf("picture = %+v", res.Messages)
	}
}

// Two hundred prompts are all listed; a prompt added later arrives with
// the server's list_changed.
func TestPromptsManyAndChanged(t *testing.T) {
	h := elicitHub(t, nil, false, map[string]any{"env": map[string]string{"FEATURES_PROMPTS": "200"}})
	info, _ := h.Catalog().Server("f")
	if got := len(info.Prompts); got != 205 {
		t.Fatalf("%d prompts, want 205", got)
	}
	if _, err := h.CallTool(context.Background(), mcpgram.Caller{}, "f", "add_prompt", map[string]any{"name": "zz_late"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the prompt added later is listed", func() bool {
		info, _ := h.Catalog().Server("f")
		_, ok := info.Prompt("zz_late")
		return ok
	})
}
