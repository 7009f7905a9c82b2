package main_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// `mcp prompts` lists the screened prompts with their arguments; `mcp
// prompt` prints a prompt's messages, exits 1 when the server fails it
// and 2 for a usage mistake.
func TestMCPPrompts(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	out, errOut, code := b.run(nil, "--mcp-settings", settings, "mcp", "prompts")
	if code != 0 || !strings.Contains(out, "greet(who*, mood)") || !strings.Contains(out, "Greet someone") || !strings.Contains(out, "5 prompts") {
		t.Errorf("mcp prompts: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "nnnn") {
		t.Errorf("mcp prompts lists a refused name:\n%s", out)
	}
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"greet", []string{"f", "greet", `{"who": "Ada"}`}, 0, "[user]\nPlease greet Ada.\n"},
		{"picture", []string{"f", "picture"}, 0, "[user]\nDescribe this picture.\n[user]\n[image image/png, 70 bytes]\n[user]\n[resource notes://style]\nBe brief.\n"},
		{"broken", []string{"f", "broken"}, 1, ""},
		{"missing argument", []string{"f", "greet"}, 1, ""},
		{"not an object", []string{"f", "greet", `["Ada"]`}, 2, ""},
		{"too few", []string{"f"}, 2, ""},
		{"mistyped prompt", []string{"f", "gret"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := b.run(nil, append([]string{"--mcp-settings", settings, "mcp", "prompt"}, tt.args...)...)
			if code != tt.code || (tt.out != "" && out != tt.out) {
				t.Errorf("exit %d, want %d; stdout %q, want %q\nstderr: %s", code, tt.code, out, tt.out, errOut)
			}
		})
	}
	// No server with prompts: said, not a blank line.
	none := testenv.WriteSettings(t, t.TempDir(), map[string]any{"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator")}})
	out, errOut, code = b.run(nil, "--mcp-settings", none, "mcp", "prompts")
	if want := "mcpgram: none of the running servers (calculator) offers prompts\n"; code != 0 || out != "" || errOut != want {
		t.Errorf("mcp prompts with none: exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, want)
	}
	out, _, code = b.run(nil, "mcp", "prompt", "--help")
	if code != 0 || !strings.Contains(out, "JSON object of strings") {
		t.Errorf("mcp prompt --help: exit %d\n%s", code, out)
	}
}

// In `mcpgram chat`, /prompts lists the prompts and /greet asks its
// arguments, then sends the prompt as the operator's message. The form
// offers /cancel and c = cancel, not decline (for a prompt they are the
// same): /cancel at a field, c and an older /decline or n send nothing.
func TestChatPrompts(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return llmfake.Text("Got: " + c.Request.Last())
	})
	chat := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	const intro = "Answer each field. Enter takes the default, or skips a field that is not required; /back returns to the field before; /cancel ends the form."
	chat.converse([]step{
		{"> ", "/prompts"},
		{"/greet\tf: Greet someone", ""},
		{"> ", "/greet"},
		{intro, ""},
		{"who (Whom to greet): a text (required) > ", "Ada"},
		{"mood (How): a text > ", "warmly"},
		{"Submit? [y = submit, c = cancel, b = back] ", "y"},
		{"(sent the prompt greet of f:)\n  Please greet Ada, warmly.", ""},
		{"Got: Please greet Ada, warmly.", "/greet"},
		{"who (Whom to greet): a text (required) > ", "/cancel"},
		{"Not sent.", "/greet"},
		{"who (Whom to greet): a text (required) > ", "/decline"},
		{"Not sent.", "/greet"},
		{"who (Whom to greet): a text (required) > ", "Bo"},
		{"mood (How): a text > ", "kindly"},
		{"Submit? [y = submit, c = cancel, b = back] ", "c"},
		{"Not sent.", "/greet"},
		{"who (Whom to greet): a text (required) > ", "Cy"},
		{"mood (How): a text > ", "kindly"},
		{"Submit? [y = submit, c = cancel, b = back] ", "n"},
		{"Not sent.", "/broken"},
		{"f could not give the prompt broken", "/quit"},
	})
	chat.end()
	// (The help printed at start names decline for servers' forms.)
	_, out, _ := strings.Cut(chat.out.String(), intro)
	if strings.Contains(out, "decline") {
		t.Errorf("the prompt's form offers decline:\n%s", out)
	}
	if n := len(model.Calls()); n != 1 {
		t.Errorf("model calls = %d, want 1 (the cancelled prompts sent nothing)", n)
	}
}
