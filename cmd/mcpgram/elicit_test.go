package main_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Without a terminal, `mcp call` answers what a server asks as nobody
// there can: each field's default, declined when a required field has
// none, and a URL declined; what cannot be shown is cancelled; stderr says
// what was asked and answered.
func TestMCPCallAnswersWithoutATerminal(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		b := buildBinary(t)
		settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, legacy)})
		tests := []struct {
			name, tool, args string
			want, note       string
		}{
			{"defaults", "ask", `{"message": "Fine?", "schema": {"type": "object", "properties": {"n": {"type": "integer", "default": 3}, "ok": {"type": "boolean", "default": true}, "x": {"type": "string"}}}}`,
				`{"action":"accept","content":{"n":3,"ok":true}}`, `answered with the defaults, {"n":3,"ok":true}`},
			{"required without default", "book", "", `{"action":"decline","content":null}`, "a required field has no default: declined"},
			{"url", "visit", `{"url": "https://example.com/login"}`, `{"action":"decline","content":null}`, "The server, not mcpgram, asks you to open this address on example.com"},
			{"200 fields", "ask", `{"fields": 200}`, `{"action":"cancel","content":null}`, "more than 50 fields (200). Cancelled."},
			{"escape sequence", "ask", `{"message": "\u001b[2Jgone", "schema": {"type": "object", "properties": {}}}`, `{"action":"accept","content":{}}`, `\u001B[2Jgone`},
		}
		for _, tt := range tests {
			t.Run(map[bool]string{false: "2026-07-28/", true: "2025-11-25/"}[legacy]+tt.name, func(t *testing.T) {
				args := []string{"--mcp-settings", settings, "mcp", "call", "f", tt.tool}
				if tt.args != "" {
					args = append(args, tt.args)
				}
				out, errOut, code := b.run(nil, args...)
				if code != 0 || strings.TrimSpace(out) != tt.want {
					t.Errorf("exit %d, stdout %q, want %s\nstderr: %s", code, out, tt.want, errOut)
				}
				if !strings.Contains(errOut, tt.note) {
					t.Errorf("stderr does not say %q:\n%s", tt.note, errOut)
				}
				if strings.ContainsRune(errOut, 0x1b) {
					t.Errorf("an escape character reached the terminal: %q", errOut)
				}
			})
		}
	}
}

// In a terminal, `mcp call` asks each field in the server's order, says
// why an answer will not do and asks again, takes a default on Enter, and
// sends exactly what was answered.
func TestMCPCallAsksInTheTerminal(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	cmd := exec.Command(b.path, "--mcp-settings", settings, "mcp", "call", "f", "book")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child has it
	var screen testenv.Buffer
	go func() { _, _ = io.Copy(&screen, ptmx) }()
	answers := []struct{ prompt, line string }{
		{"Date (The day of the booking): a date, YYYY-MM-DD (required) > ", "christmas"},
		{"Try again.", "2026-12-24"},
		{"Party size: a whole number from 1 to 12 [default 2] (required) > ", ""},
		{"Seating: one of the choices: 1. Indoors 2. On the terrace (required) > ", "2"},
		{"Vegetarian menu: yes or no [default No] > ", "yes"},
		{"Extras: any of the choices: 1. cake 2. flowers 3. candles (numbers or names, separated by commas) > ", "1, candles"},
		{"Name: a text of 2 to 40 characters > ", "A"},
		{"at least 2 characters", "Ann"},
		{"Email: an email address > ", ""},
		{"Submit? [y = submit, n = decline, c = cancel, b = back] ", "y"},
	}
	seen := 0
	for _, a := range answers {
		testenv.Eventually(t, 30*time.Second, "the prompt "+a.prompt, func() bool {
			return strings.Contains(screen.String()[seen:], a.prompt)
		})
		seen += strings.Index(screen.String()[seen:], a.prompt) + len(a.prompt)
		if _, err := io.WriteString(ptmx, a.line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp call: %v\n%s", err, screen.String())
	}
	want := `{"action":"accept","content":{"date":"2026-12-24","extras":["cake","candles"],"name":"Ann","party":2,"seating":"outdoor","vegetarian":true}}`
	if got := strings.TrimSpace(out.String()); got != want {
		t.Errorf("the server got %s\nwant %s", got, want)
	}
}

// `mcpgram chat` asks in the terminal what a server asks mid-call, while
// the turn waits for the tool.
func TestChatAsksInTheTerminal(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, true, "ask")})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), `"action"`) {
			return llmfake.Text("Noted.")
		}
		return llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>ask</tool_name><arguments>{"message": "Where to?", "schema": {"type": "object", "properties": {"city": {"type": "string", "minLength": 2}}, "required": ["city"]}}</arguments></use_mcp_tool>`)
	})
	chat := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	chat.converse([]step{
		{"> ", "plan my trip"},
		{"f asks (tool ask):\n  Where to?", ""},
		{"city: a text of at least 2 characters (required) > ", "X"},
		{"at least 2 characters", "Oslo"},
		{"Submit? [y = submit, n = decline, c = cancel, b = back] ", "y"},
		{"Noted.", "/quit"},
	})
	chat.end()
	calls := model.Calls()
	if got := calls[len(calls)-1].Request.Last(); !strings.Contains(got, `{"action":"accept","content":{"city":"Oslo"}}`) {
		t.Errorf("the model got the tool's result %q", got)
	}
}
