package agent_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// In a group, what a per-user tool (echo's keep, which reports its
// caller) returned to one member never reaches another member's model
// request, in XML or native mode, and the wire stays well formed; the
// group's conversation and the answer it saw are shared, and the member's
// own next turn has the result.
func TestGroupAudience(t *testing.T) {
	t.Parallel()
	a := mcpgram.Caller{UserID: "111", ChatID: "-7"}
	b := mcpgram.Caller{UserID: "222", ChatID: "-7"}
	for _, m := range modes[:2] {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.handler(func(c llmfake.Call) llmfake.Reply {
				msgs := c.Request.Messages
				last := msgs[len(msgs)-1]
				switch {
				case last.Role == "tool" || strings.Contains(last.Content, "] Result:"):
					return m.reply(complete("Done reading."))
				case strings.Contains(last.Content, "read my note"):
					return m.reply(useTool("echo", "keep", `{"mode": "read"}`))
				}
				return m.reply(complete("Hi."))
			}), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "keep")}})
			for _, req := range []agent.Request{{Caller: a, Text: "read my note"}, {Caller: b, Text: "hello"}, {Caller: a, Text: "and again"}} {
				if got := mustTurn(t, e, req); got.Kind != agent.EventAnswer {
					t.Fatalf("%q: %+v", req.Text, got)
				}
			}
			calls := e.model.Calls()
			all := func(c llmfake.Call) string {
				var s strings.Builder
				for _, msg := range c.Request.Messages {
					s.WriteString(msg.Content + "\n")
					for _, tc := range msg.ToolCalls {
						s.WriteString(string(tc.Function.Arguments) + "\n")
					}
				}
				return s.String()
			}
			if got := all(calls[1]); !strings.Contains(got, `"mcpgram/user_id":"111"`) {
				t.Fatalf("the keep call did not report its caller: %s", got)
			}
			bobs := all(calls[2])
			if strings.Contains(bobs, "mcpgram/user_id") || strings.Contains(bobs, `{"mode": "read"}`) || strings.Contains(bobs, `{"mode":"read"}`) {
				t.Errorf("the other member's request holds the result or the call:\n%s", bobs)
			}
			if !strings.Contains(bobs, "read my note") || !strings.Contains(bobs, "Done reading.") {
				t.Errorf("the other member's request lacks the group's conversation:\n%s", bobs)
			}
			if got := all(calls[3]); !strings.Contains(got, `"mcpgram/user_id":"111"`) {
				t.Errorf("the member's own next request lacks their result:\n%s", got)
			}
		})
	}
}
