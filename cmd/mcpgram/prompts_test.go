package main_test

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/internal/llmfake"
	"github.com/mcpgram/mcpgram/internal/testenv"
)

// `mcp prompts` lists the screened prompts with their arguments; `mcp
// prompt` prints a prompt's messages, exits 1 when the server fails it
// and 2 for a usage mistake.
func TestMCPPrompts(t *testing.T) {
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := b.run(nil, append([]string{"--mcp-settings", settings, "mcp", "prompt"}, tt.args...)...)
			if code != tt.code || (tt.out != "" && out != tt.out) {
				t.Errorf("exit %d, want %d; stdout %q, want %q\nstderr: %s", code, tt.code, out, tt.out, errOut)
			}
		})
	}
	out, _, code = b.run(nil, "mcp", "prompt", "--help")
	if code != 0 || !strings.Contains(out, "JSON object of strings") {
		t.Errorf("mcp prompt --help: exit %d\n%s", code, out)
	}
}

// In `mcpgram chat`, /prompts lists the prompts and /greet asks its
// arguments, then sends the prompt as the operator's message.
func TestChatPrompts(t *testing.T) {
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		return llmfake.Text("Got: " + c.Request.Last())
	})
	cmd := exec.Command(b.path, "--mcp-settings", settings, "chat")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(), "DATABASE_PATH=" + b.dir + "/db.sqlite"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	steps := []struct{ wait, line string }{
		{"> ", "/prompts"},
		{"/greet\tf: Greet someone", ""},
		{"> ", "/greet"},
		{"who (Whom to greet): a text (required) > ", "Ada"},
		{"mood (How): a text > ", "warmly"},
		{"Submit? [y = submit, n = decline, c = cancel, b = back] ", "y"},
		{"(sent the prompt greet of f:)\n  Please greet Ada, warmly.", ""},
		{"Got: Please greet Ada, warmly.", "/broken"},
		{"f could not give the prompt broken", "/quit"},
	}
	seen := 0
	for _, s := range steps {
		testenv.Eventually(t, 30*time.Second, "the terminal to show "+s.wait, func() bool {
			return strings.Contains(out.String()[seen:], s.wait)
		})
		seen += strings.Index(out.String()[seen:], s.wait) + len(s.wait)
		if s.line != "" {
			io.WriteString(stdin, s.line+"\n")
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat: %v\n%s", err, out.String())
	}
}
