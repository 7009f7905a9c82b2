package executor_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

func TestPlanReply(t *testing.T) {
	echo := tool("everything", "echo", `{"message":"a"}`)
	done := "<attempt_completion><result>ok</result></attempt_completion>"
	ask := "<ask_followup_question><question>q?</question></ask_followup_question>"
	tests := []struct {
		name     string
		in       string
		calls    int
		final    string
		skipped  int
		feedback []string
	}{
		{"nothing", "just text", 0, "", 0, nil},
		{"calls only", echo + echo, 2, "", 0, nil},
		{"completion alone", done, 0, toolcall.AttemptCompletion, 0, nil},
		{"completion after calls", echo + done + echo, 2, "", 1, []string{
			"[attempt_completion] Error:\nNot acted on: it came after tool calls in the same message, before you saw their results.",
		}},
		{"question after call", echo + ask, 1, "", 1, []string{"[ask_followup_question] Error:\nNot acted on"}},
		{"call after completion", done + echo + ask, 0, toolcall.AttemptCompletion, 2, []string{
			"[use_mcp_tool for 'echo' on 'everything'] Error:\nNot acted on: it came after attempt_completion in the same message, which ends your turn.",
			"[ask_followup_question] Error:\nNot acted on: it came after attempt_completion",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := executor.PlanReply(toolcall.Parse(tc.in).Blocks)
			if len(p.Calls) != tc.calls || len(p.Skipped) != tc.skipped {
				t.Errorf("got %d calls, %d skipped; want %d, %d", len(p.Calls), len(p.Skipped), tc.calls, tc.skipped)
			}
			switch {
			case tc.final == "" && p.Final != nil:
				t.Errorf("got final %q, want none", p.Final.Name)
			case tc.final != "" && (p.Final == nil || p.Final.Name != tc.final):
				t.Errorf("got final %+v, want %q", p.Final, tc.final)
			}
			for _, w := range tc.feedback {
				if !strings.Contains(p.Feedback, w) {
					t.Errorf("feedback lacks %q:\n%s", w, p.Feedback)
				}
			}
			if len(tc.feedback) == 0 && p.Feedback != "" {
				t.Errorf("unexpected feedback %q", p.Feedback)
			}
		})
	}
}
