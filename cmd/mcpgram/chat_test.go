package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The terminal chat as a person uses it, in the real binary: Ctrl-C stops
// the running request and the chat goes on; at the prompt it ends the
// chat. Typed commands it does not know are answered, not sent to the
// model, and log lines go to the log file, not into the conversation.
func TestChatInTheTerminal(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator")},
		"broken":     map[string]any{"command": "./no-such-server"},
	})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if strings.HasSuffix(c.Request.Last(), "something slow, please") {
			// Far longer than the test: only Ctrl-C ends this call.
			return llmfake.Reply{Content: "too late", Delay: time.Hour}
		}
		return llmfake.Text("Quick answer.")
	})
	dbDir := filepath.Join(b.dir, "state")
	cmd := exec.Command(b.path, "--mcp-settings", settings, "chat")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(), "DATABASE_PATH=" + filepath.Join(dbDir, "db.sqlite")}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	waitOut := func(what string, cond func() bool) {
		t.Helper()
		testenv.Waiter{Explain: func() string { return "stdout:\n" + out.String() + "\nstderr:\n" + errOut.String() }}.
			Eventually(t, 30*time.Second, what, cond)
	}
	prompts := func() int { return strings.Count(out.String(), "> ") }
	waitOut("the prompt", func() bool { return prompts() >= 1 })

	io.WriteString(stdin, "/frobnicate\n")
	waitOut("the answer to /frobnicate", func() bool { return strings.Contains(out.String(), "Unknown command /frobnicate.") })

	io.WriteString(stdin, "something slow, please\n")
	waitOut("the model to be asked", func() bool { return len(model.Calls()) == 1 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitOut("the request to stop", func() bool { return strings.Contains(out.String(), "! Stopped.") })

	n := prompts()
	io.WriteString(stdin, "and now quickly\n")
	waitOut("the next answer", func() bool { return strings.Contains(out.String(), "Quick answer.") && prompts() > n })

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("chat ended with %v, want a clean exit", err)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("Ctrl-C at the prompt did not end the chat")
	}
	if calls := len(model.Calls()); calls != 2 {
		t.Errorf("the model was asked %d times, want 2 (the unknown command is not sent)", calls)
	}
	if errOut.String() != "" || strings.Contains(out.String(), "level=") {
		t.Errorf("log lines reached the terminal:\nstdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	log, err := os.ReadFile(filepath.Join(dbDir, "chat.log"))
	if err != nil || !strings.Contains(string(log), "broken") {
		t.Errorf("chat.log = %q, %v; want the failed server's warning", log, err)
	}
}

// Ctrl-C in the terminal chat during a tool call cancels the call on its
// server, after its progress showed; the model is told the user stopped
// it, and the chat goes on.
func TestChatCtrlCStopsTheCall(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false, "wait", "cancelled")})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		switch {
		case strings.Contains(last, "for 'cancelled'"):
			_, res, _ := strings.Cut(last, "```\n")
			return llmfake.Text("<attempt_completion><result>server says " + strings.TrimSpace(strings.Split(res, "\n")[0]) + "</result></attempt_completion>")
		case strings.HasSuffix(last, "count them"):
			return llmfake.Text("<use_mcp_tool><server_name>f</server_name><tool_name>cancelled</tool_name><arguments>{}</arguments></use_mcp_tool>")
		case strings.HasSuffix(last, "wait, please"):
			return llmfake.Text("<use_mcp_tool><server_name>f</server_name><tool_name>wait</tool_name><arguments>{}</arguments></use_mcp_tool>")
		}
		return llmfake.Text("<attempt_completion><result>ok</result></attempt_completion>")
	})
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	s.converse([]step{{"> ", "wait, please"}, {"wait on f: 25%, 1 of 4 · waiting", ""}})
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	s.converse([]step{{"! Stopped.", "count them"}, {`server says {"cancelled":1}`, ""}})
	calls := model.Calls()
	told := false
	for _, m := range calls[len(calls)-1].Request.Messages {
		told = told || strings.Contains(m.Content, "The user stopped this call")
	}
	if !told {
		t.Error("the model was not told the user stopped the call")
	}
}
