package main_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// TOOL_SEARCH and PINNED_TOOLS reach the agent: the real binary, set to
// search always, lists the pinned tool alone, and the model finds the
// calculator with a search and runs it.
func TestChatToolSearch(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator"), "autoApprove": []string{"calculate"}},
		"clock":      map[string]any{"command": testenv.Bundled(t, "mcp-clock")},
	})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		switch last := c.Request.Last(); {
		case strings.HasPrefix(last, "[use_mcp_tool"):
			return llmfake.Text("<attempt_completion><result>It is " + strings.Trim(strings.SplitN(last, "\n", 2)[1], "`\n") + ".</result></attempt_completion>")
		case strings.HasPrefix(last, "[search_tools"):
			return llmfake.Text("<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name><arguments>{\"expression\": \"25 * 48 + 120 / 4\"}</arguments></use_mcp_tool>")
		}
		return llmfake.Text("<search_tools><query>calculate an arithmetic expression</query></search_tools>")
	})
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL(), "TOOL_SEARCH=0", "PINNED_TOOLS=clock/current_time")
	s.send("what is 25*48+120/4?")
	s.wait("It is 1230.", 1)
	sys := model.Calls()[0].Request.Messages[0].Content
	if !strings.Contains(sys, "## search_tools") || !strings.Contains(sys, "- current_time") || strings.Contains(sys, "- calculate") {
		t.Errorf("the first prompt does not search, or lists more than the pinned tool:\n%s", sys)
	}
	if found := model.Calls()[1].Request.Last(); !strings.Contains(found, "## calculator\n- calculate") {
		t.Errorf("the search found:\n%s", found)
	}
}
