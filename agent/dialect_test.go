package agent_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/toolcall"
)

// escapeHTML escapes markup as a model, or a proxy, that escapes its
// output does.
var escapeHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace

// markup are the pieces of the calls below that no event may show: their
// arguments' key, their tags (escaped too) and their JSON.
var markup = []string{"message", "&lt;", "&quot;", "tool_call", "use_mcp_tool", "function=", "{", "<think>"}

// Models trained on other formats write their calls in them (XML mode).
// Where what a call means is as plain as in the near misses, it runs at
// once, with no feedback and no mistake counted; and no call's markup
// reaches the user, in the streamed draft or the answer.
func TestDialectsRunFirstTime(t *testing.T) {
	t.Parallel()
	call := echo("x")
	tests := []struct {
		name  string
		reply llmfake.Reply
		shown string // the reply's visible text
		kind  string // the repair counted
	}{
		{"HTML-escaped", llmfake.Text("Checking.\n" + escapeHTML(call)), "Checking.", "html_escaped"},
		{"in the reasoning channel", llmfake.Reply{Content: "Let me check.", Reasoning: "The user wants an echo.\n" + call}, "Let me check.", "reasoning"},
		{"in <think>, no text", llmfake.Text("<think>The user wants an echo.\n" + call + "\n</think>"), "", "reasoning"},
		{"typographic quotes", llmfake.Text(useTool("echo", "echo", `{“message“: “x“}`)), "", "json_quotes"},
		{"<tool_call> JSON", llmfake.Text("<tool_call>\n{\"name\": \"echo__echo\", \"arguments\": {\"message\": \"x\"}}\n</tool_call>"), "", "dialect_tool_call"},
		{"<tool_call> function", llmfake.Text("<tool_call>\n<function=echo>\n<parameter=message>\nx\n</parameter>\n</function>\n</tool_call>"), "", "dialect_function"},
		{"a JSON reply", llmfake.Text(`{"tool": "echo", "params": {"message": "x"}}`), "", "dialect_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := metrics.New()
			e := newEnv(t, llmfake.Script(tt.reply.Split(3), llmfake.Text(complete("done"))), setup{config: func(c *wiring) { c.Metrics = m }})
			r := e.say("go")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
				t.Fatalf("last event = %+v", got)
			}
			calls := e.model.Calls()
			if res := calls[1].Request.Last(); !strings.Contains(res, echoed("x")) {
				t.Errorf("result = %q, want the call run", res)
			}
			if tp := *calls[1].Request.Temperature; tp < 0.49 || tp > 0.51 {
				t.Errorf("temperature after the call = %v, want 0.5: no mistake", tp)
			}
			noMarkup(t, r)
			if drafts := r.kinds(agent.EventText); tt.shown != "" && (len(drafts) == 0 || drafts[len(drafts)-1].Text != tt.shown) {
				t.Errorf("drafts %+v, want the last %q", drafts, tt.shown)
			}
			// The reply is stored with the call it set in motion, which a
			// restart finds and the model reads back.
			h := e.history()
			if got := executor.Calls(toolcall.Parse(h[1].Content)); len(got) != 1 {
				t.Errorf("stored reply %q holds %d calls, want 1", h[1].Content, len(got))
			}
			if a := e.audit(); len(a) != 1 || a[0].Tool != "echo" {
				t.Errorf("audit %+v", a)
			}
			if n := sample(t, m, "mcpgram_tool_format_total", "model", "fake", "result", "repaired", "kind", tt.kind); n != 1 {
				t.Errorf("counted %v repaired as %s, want 1", n, tt.kind)
			}
		})
	}
}

// What is not plainly one call goes back to the model, and its markup
// does not reach the user either.
func TestDialectsFedBack(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmfake.Reply
		want  string
	}{
		{"HTML-escaped, an unknown tool", llmfake.Text(escapeHTML(useTool("echo", "nope", `{"message": "x"}`))), `has no tool "nope"`},
		{"<tool_call> JSON, an unknown tool", llmfake.Text(`<tool_call>{"name": "nope", "arguments": {"message": "x"}}</tool_call>`), `No running server has a tool "nope"`},
		{"<tool_call> function, a value the schema refuses", llmfake.Text("<tool_call><function=add><parameter=a>one</parameter><parameter=b>2</parameter></function></tool_call>"), `"one" for "a" is not a JSON`},
		{"two calls in the reasoning", llmfake.Reply{Reasoning: echo("x") + "\nor\n" + echo("y")}, "your reasoning held 2 different tool calls"},
		{"a JSON reply with another key", llmfake.Text(`{"tool": "echo", "params": {"message": "x"}, "then": "stop"}`), "not only {\"tool\": NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(tt.reply.Split(3), llmfake.Text(complete("done"))), setup{})
			r := e.say("go")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
				t.Fatalf("last event = %+v", got)
			}
			if fb := e.model.Calls()[1].Request.Last(); !strings.Contains(fb, tt.want) {
				t.Errorf("feedback %q lacks %q", fb, tt.want)
			}
			if a := e.audit(); len(a) != 0 {
				t.Errorf("audit %+v, want nothing run", a)
			}
			noMarkup(t, r)
		})
	}
}

// In native mode the calls are the reply's tool_calls: a call in the
// reasoning channel is not taken, and the reply's text is the answer.
func TestReasoningNativeUndisturbed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(llmfake.Reply{Content: "Hello there.", Reasoning: echo("x")}), setup{config: func(c *wiring) {
		c.ToolCalling = mcpgram.ToolCallingNative
	}})
	r := e.say("hi")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Hello there." {
		t.Fatalf("last event = %+v", got)
	}
	if n := len(e.model.Calls()); n != 1 || len(e.audit()) != 0 {
		t.Errorf("%d model calls, audit %+v: want the answer alone", n, e.audit())
	}
	if len(e.model.Calls()[0].Request.Tools) == 0 {
		t.Error("no tools offered: not native mode")
	}
}

// noMarkup fails when an event shows a piece of a call.
func noMarkup(t *testing.T, r *recorder) {
	t.Helper()
	for _, ev := range r.All() {
		for _, m := range markup {
			if strings.Contains(ev.Text, m) {
				t.Errorf("event %v %q shows %q", ev.Kind, ev.Text, m)
			}
		}
	}
}
