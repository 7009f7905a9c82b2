package bot_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// The bot's scenarios in every way of calling tools: a plain answer, a
// tool call with its approval card, and a follow-up question with its
// buttons, through the real agent, hub (hub/testdata/echo) and store. In
// native mode the scripted model answers with tool_calls, streamed; in
// auto against an endpoint that refuses tools, in XML after one refusal.
func TestE2EToolCallingModes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		calling mcpgram.ToolCalling
		rejects bool
	}{
		{"xml", mcpgram.ToolCallingXML, false},
		{"native", mcpgram.ToolCallingNative, false},
		{"auto", mcpgram.ToolCallingAuto, false},
		{"auto, tools refused", mcpgram.ToolCallingAuto, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := llmfake.Native(scriptedModel(0))
			var refused int
			if tc.rejects {
				h = llmfake.RejectTools(h, &refused)
			}
			s := newStack(t, h, func(p *mcpgram.Profile, _ *agent.Options) { p.ToolCalling = tc.calling })
			s.start(nil)

			s.fake.Text(alice, alice, "hi there")
			waitText(t, s.fake, alice, "Hello! You said: hi there")

			s.fake.Text(alice, alice, "add numbers")
			card := waitText(t, s.fake, alice, "Approval needed")
			if !strings.Contains(card.Plain, "Run add on echo") || !strings.Contains(card.Plain, "• a: 2\n• b: 3") {
				t.Errorf("approval card: %q", card.Plain)
			}
			waitAnswer(t, s.fake, s.fake.Press(alice, alice, card.ID, strings.SplitN(card.Buttons()[0], "=", 2)[1]))
			waitText(t, s.fake, alice, "Tool said: The sum of 2 and 3 is 5")

			s.fake.Text(alice, alice, "please ask me")
			q := waitText(t, s.fake, alice, "Which city?")
			if got := q.Buttons(); len(got) != 2 {
				t.Fatalf("buttons %q", got)
			}
			waitAnswer(t, s.fake, s.fake.Press(alice, alice, q.ID, strings.SplitN(q.Buttons()[1], "=", 2)[1]))
			waitText(t, s.fake, alice, "You picked Rome & <Milan>")

			for _, m := range s.fake.Messages(alice) {
				if strings.Contains(m.Plain, "<use_mcp_tool") || strings.Contains(m.Plain, "server_name") || strings.Contains(m.Plain, "echo__") {
					t.Errorf("tool call shown to the user: %q", m.Plain)
				}
			}
			native := 0
			for _, c := range s.model.Calls() {
				if len(c.Request.Tools) > 0 {
					native++
				}
			}
			switch {
			case tc.rejects && (refused != 1 || native != 1):
				t.Errorf("tools offered %d times, refused %d: want once each", native, refused)
			case !tc.rejects && tc.calling != mcpgram.ToolCallingXML && native != len(s.model.Calls()):
				t.Errorf("%d of %d model calls offered tools, want all", native, len(s.model.Calls()))
			case tc.calling == mcpgram.ToolCallingXML && native != 0:
				t.Errorf("%d model calls offered tools in XML mode", native)
			}
		})
	}
}
