package executor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

// Prepare takes every decision about a reply in one order: text without
// blocks, examples, which blocks to act on, the checks, approval.
func TestPrepare(t *testing.T) {
	cat := testCatalog()
	cat.Servers = append(cat.Servers, mcpgram.ServerInfo{Name: "starting", Status: mcpgram.StatusStarting})
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	echo := tool("everything", "echo", `{"message":"a"}`)
	sum := tool("everything", "get-sum", `{"a":1,"b":2}`)
	done := "<attempt_completion><result>All done.</result></attempt_completion>"
	ask := `<ask_followup_question><question>Which?</question><options>["a","b"]</options></ask_followup_question>`
	tests := []struct {
		name     string
		in       string
		action   executor.Action
		answer   string
		feedback []string // parts of Feedback, in order
		steps    string   // per step: o (runs at once), a (approval first), x (refused)
		await    []string
	}{
		{name: "text answers", in: "Hello there.", action: executor.ActAnswer, answer: "Hello there."},
		{name: "empty reply", in: "  <thinking>hm</thinking> ", action: executor.ActCorrect, feedback: []string{"no visible text and no tool call"}},
		{name: "tool name as a tag", in: "<echo>hi</echo>", action: executor.ActCorrect, feedback: []string{"You wrote <echo> as a tag"}},
		{name: "only an example", in: "It would look like this:\n```xml\n" + echo + "\n```", action: executor.ActClarify, feedback: []string{"Not run: written inside a code fence"}},
		{name: "completion", in: "Finished.\n" + done, action: executor.ActAnswer, answer: "All done."},
		{name: "question", in: ask, action: executor.ActAsk},
		{name: "question with bad options", in: `<ask_followup_question><question>Q?</question><options>["one"]</options></ask_followup_question>`, action: executor.ActCorrect, feedback: []string{"[ask_followup_question] Error:\nThe options must be 2 to 5 strings"}},
		{name: "calls", in: echo + sum, action: executor.ActRun, steps: "oa"},
		{name: "approve all", in: echo + sum + "<use_mcp_tool><server_name>nope</server_name><tool_name>x</tool_name></use_mcp_tool>", action: executor.ActRun, steps: "oox"},
		{name: "foreign syntax is refused", in: "<tool_call>echo hi</tool_call>", action: executor.ActRun, steps: "x"},
		{name: "example and completion set aside after calls", in: "Doing it.\n" + sum + "\n```\n" + echo + "\n```\n" + done, action: executor.ActRun, steps: "a", feedback: []string{
			"Not run: written inside a code fence", "[attempt_completion] Error:\nNot acted on: it came after tool calls",
		}},
		{name: "server still starting", in: tool("starting", "anything", `{}`) + echo, action: executor.ActRun, steps: "ao", await: []string{"starting"}},
	}
	ex := executor.New(nil, executor.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := ex.Prepare(cat, toolcall.Parse(tc.in), tc.name == "approve all")
			if p.Action != tc.action || p.Answer != tc.answer {
				t.Fatalf("got %v %q, want %v %q", p.Action, p.Answer, tc.action, tc.answer)
			}
			rest := p.Feedback
			for _, w := range tc.feedback {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("feedback lacks %q, in order:\n%s", w, p.Feedback)
				}
				rest = rest[i+len(w):]
			}
			if len(tc.feedback) == 0 && p.Feedback != "" {
				t.Errorf("unexpected feedback %q", p.Feedback)
			}
			var steps string
			for _, s := range p.Steps {
				switch {
				case s.Err != nil:
					steps += "x"
					if !strings.HasPrefix(s.Feedback, "[") || s.Call.Server != "" {
						t.Errorf("refused step %+v", s)
					}
				case s.Approve:
					steps += "a"
				default:
					steps += "o"
				}
			}
			if steps != tc.steps || p.Refused() != strings.Contains(steps, "x") {
				t.Errorf("steps %q (refused %v), want %q", steps, p.Refused(), tc.steps)
			}
			if !slices.Equal(p.Await, tc.await) {
				t.Errorf("await %q, want %q", p.Await, tc.await)
			}
			if tc.action == executor.ActAsk && (p.Question == nil || p.Question.Question != "Which?" || len(p.Question.Options) != 2) {
				t.Errorf("question %+v", p.Question)
			}
		})
	}
}

// A reply stored before its calls ran set in motion its complete,
// runnable calls, not examples, questions or foreign syntax.
func TestReplyCalls(t *testing.T) {
	in := "Doing it.\n" + tool("everything", "echo", `{}`) +
		"\n```\n" + tool("everything", "get-sum", `{}`) + "\n```\n" +
		"<tool_call>{}</tool_call><access_mcp_resource><server_name>s</server_name><uri>a://b</uri></access_mcp_resource>" +
		"<attempt_completion><result>x</result></attempt_completion><use_mcp_tool><server_name>s</server_name>"
	var got []string
	for _, b := range executor.Calls(toolcall.Parse(in)) {
		got = append(got, b.Name+":"+b.Params["tool_name"]+b.Params["uri"])
	}
	if want := []string{"use_mcp_tool:echo", "access_mcp_resource:a://b"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
