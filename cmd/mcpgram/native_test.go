package main_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
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
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL(), "TOOL_CALLING=native")
	s.send("what is 25*48+120/4?")
	s.wait("It is 1230.", 1)
	calls := model.Calls()
	if len(calls) != 2 || !slices.Contains(calls[0].Request.ToolNames(), "calculator__calculate") || len(calls[1].Request.Messages[2].ToolCalls) != 1 {
		t.Errorf("the model was not called natively: %+v", calls)
	}
}
