package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/internal/llmfake"
	"github.com/mcpgram/mcpgram/internal/testenv"
)

// TOOL_CALLING reaches the agent: the real binary, set to native, offers
// the bundled calculator as a function and runs the model's tool_calls.
func TestChatNativeToolCalling(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator"), "autoApprove": []string{"calculate"}},
	})
	model := llmfake.New(t, llmfake.Native(func(c llmfake.Call) llmfake.Reply {
		if last := c.Request.Last(); strings.HasPrefix(last, "[use_mcp_tool") {
			return llmfake.Text("<attempt_completion><result>It is " + strings.Trim(strings.SplitN(last, "\n", 2)[1], "`\n") + ".</result></attempt_completion>")
		}
		return llmfake.Text("<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name><arguments>{\"expression\": \"25 * 48 + 120 / 4\"}</arguments></use_mcp_tool>")
	}))
	cmd := exec.Command(b.path, "--mcp-settings", settings, "chat")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
		"DATABASE_PATH=" + filepath.Join(b.dir, "state", "db.sqlite"), "TOOL_CALLING=native"}
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
	io.WriteString(stdin, "what is 25*48+120/4?\n")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "It is 1230.") {
		if time.Now().After(deadline) {
			t.Fatalf("no answer; stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	calls := model.Calls()
	if len(calls) != 2 || !slices.Contains(calls[0].Request.ToolNames(), "calculator__calculate") || len(calls[1].Request.Messages[2].ToolCalls) != 1 {
		t.Errorf("the model was not called natively: %+v", calls)
	}
}
