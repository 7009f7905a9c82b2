package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// Killed with -9 while a tool runs, the bot replays the message after a
// restart, and the model sees the call it had made, marked "outcome
// unknown", instead of making it again blindly. The real binary, twice,
// with the Telegram and model fakes.
func TestKilledMidToolDoesNotRepeatIt(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	// In a folder of the server's own: not beside the bot's database.
	calls := filepath.Join(b.dir, "jobs", "calls.log")
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"jobs": map[string]any{
			"command": testenv.TestServer(t, "echo"), "autoApprove": []string{"sleep"},
			"env": map[string]string{"ECHO_CALL_LOG": calls},
			// Unsandboxed: the orphaned server is found by the pid it
			// logs, which a sandbox's own PID namespace would renumber.
			"sandbox": "off",
		},
	})
	t.Cleanup(func() { killLogged(calls) }) // the orphaned server of the killed bot
	tg := tgfake.New(t)
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		for _, m := range c.Request.Messages {
			if strings.Contains(m.Content, "Outcome unknown") {
				return llmfake.Text("The job may have started already, so I will not start it again.")
			}
		}
		return llmfake.Text(`Starting the job.<use_mcp_tool><server_name>jobs</server_name><tool_name>sleep</tool_name><arguments>{"ms": 600000}</arguments></use_mcp_tool>`)
	})
	env := []string{
		"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
		"DATABASE_PATH=" + filepath.Join(b.dir, "mcpgram.db"), "ALLOWED_USER_IDS=42", "RATE_LIMIT_PER_MINUTE=1000",
	}
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command(b.path, "--mcp-settings", settings, "run")
		cmd.Dir = b.dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}, env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		return cmd
	}

	first := start()
	waitForTool(t, tg, 42, "sleep")
	tg.Text(42, 42, "start the long job")
	tg.WaitFor(t, 30*time.Second, "the job to start", func() bool { return len(loggedCalls(calls)) == 1 })
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.Process.Wait()

	second := start()
	tg.WaitFor(t, 30*time.Second, "the answer after the restart", func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Plain, "I will not start it again") {
				return true
			}
		}
		return false
	})
	if n := len(loggedCalls(calls)); n != 1 {
		t.Errorf("the job started %d times, want once", n)
	}
	all := model.Calls()
	last := all[len(all)-1].Request.Messages
	var text []string
	for _, m := range last[1:] {
		text = append(text, m.Role+": "+m.Content)
	}
	joined := strings.Join(text, "\n")
	if strings.Count(joined, "start the long job") != 1 || !strings.Contains(joined, "<tool_name>sleep</tool_name>") || !strings.Contains(joined, "[use_mcp_tool for 'sleep' on 'jobs'] Error:\nOutcome unknown") {
		t.Errorf("after the restart the model read:\n%s\nwant the message once, the call, and its outcome unknown", joined)
	}
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Process.Wait(); err != nil {
		t.Error(err)
	}
}

// loggedCalls reads the pids the echo test server logged, one per sleep.
func loggedCalls(path string) []int {
	b, _ := os.ReadFile(path)
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if pid, err := strconv.Atoi(strings.TrimPrefix(line, "sleep ")); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killLogged(path string) {
	for _, pid := range loggedCalls(path) {
		// The server leads its own process group.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
