package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// Calls a model writes in another family's way run, and none of their
// markup reaches the chat: not in a draft as the reply streams, nor in a
// message. (Before, an HTML-escaped call and a JSON call were shown.)
func TestE2EDialectsReachNoChat(t *testing.T) {
	escape := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace
	replies := map[string]llmfake.Reply{
		"escaped":   llmfake.Text("Checking that for you, one moment please.\n" + escape(useTool("echo", "echo", `{"message": "one"}`))),
		"json":      llmfake.Text(`{"tool": "echo__echo", "params": {"message": "two"}}`),
		"reasoning": {Content: "Let me ask the echo tool about that, one moment.", Reasoning: "The user wants an echo.\n" + useTool("echo", "echo", `{"message": "three"}`)},
		"tool_call": llmfake.Text("Calling the echo tool for you, one moment please.\n<tool_call>\n<function=echo>\n<parameter=message>\nfour\n</parameter>\n</function>\n</tool_call>"),
	}
	model := func(c llmfake.Call) llmfake.Reply {
		r, ok := replies[c.Request.Last()]
		if !ok {
			return scriptedModel(0)(c)
		}
		// Slow enough for drafts (every 10 ms in tests) to show the
		// reply as it grows.
		r = r.Split(4)
		r.ChunkDelay = 2 * time.Millisecond
		return r
	}
	s := newStack(t, model, nil)
	s.fake.EnableDrafts()
	s.start(nil)
	for _, say := range []struct{ text, echoed string }{{"escaped", "one"}, {"json", "two"}, {"reasoning", "three"}, {"tool_call", "four"}} {
		s.fake.Text(alice, alice, say.text)
		waitText(t, s.fake, alice, "Tool said: "+say.echoed)
	}
	shown := s.fake.Drafts(alice)
	for _, m := range s.fake.Messages(alice) {
		shown = append(shown, m.Plain)
	}
	for _, text := range shown {
		for _, markup := range []string{"&lt;", "&quot;", "<", "use_mcp_tool", "server_name", "tool_call", "function=", "params", "message", "{"} {
			if strings.Contains(text, markup) {
				t.Errorf("the chat shows %q: %q", markup, text)
			}
		}
	}
	if drafts := s.fake.Drafts(alice); len(drafts) < 3 {
		t.Errorf("%d drafts, want the prose of three replies streamed: %q", len(drafts), drafts)
	}
}
