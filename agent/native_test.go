package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/toolcall"
)

// A mode is a way of calling tools the end-to-end scenarios run in: the
// scripts are written once, in XML, and a native model's replies are the
// same calls as tool_calls, streamed in pieces.
type mode struct {
	name    string
	calling mcpgram.ToolCalling
	// rejects: the endpoint refuses tools, as one without native tool
	// calling does (auto falls back to XML).
	rejects bool
}

var modes = []mode{
	{"xml", mcpgram.ToolCallingXML, false},
	{"native", mcpgram.ToolCallingNative, false},
	{"auto", mcpgram.ToolCallingAuto, false},
	{"auto, tools refused", mcpgram.ToolCallingAuto, true},
}

// native reports whether the model answers with tool_calls.
func (m mode) native() bool { return m.calling != mcpgram.ToolCallingXML && !m.rejects }

// reply is the XML reply s as the mode's model writes it.
func (m mode) reply(s string) llmfake.Reply {
	if !m.native() {
		return llmfake.Text(s).Split(7)
	}
	return llmfake.AsNative(llmfake.Text(s))
}

// script answers the n-th model call with replies[n-1], in the mode.
func (m mode) script(replies ...string) llmfake.Handler {
	rs := make([]llmfake.Reply, len(replies))
	for i, r := range replies {
		rs[i] = m.reply(r)
	}
	return m.handler(llmfake.Script(rs...))
}

func (m mode) handler(h llmfake.Handler) llmfake.Handler {
	if m.rejects {
		return llmfake.RejectTools(h, nil)
	}
	return h
}

func (m mode) env(t *testing.T, h llmfake.Handler, s setup) *env {
	t.Helper()
	cfg := s.config
	s.config = func(c *wiring) {
		c.ToolCalling = m.calling
		if cfg != nil {
			cfg(c)
		}
	}
	return newEnv(t, h, s)
}

// answered returns the model calls that got an answer: without the ones
// an endpoint refusing tools refused, the only ones that offer tools
// there.
func answered(e *env, m mode) []llmfake.Call {
	calls := e.model.Calls()
	if !m.rejects {
		return calls
	}
	return slices.DeleteFunc(calls, func(c llmfake.Call) bool { return len(c.Request.Tools) > 0 })
}

// read is what the model read after its last reply: every message after
// the last assistant message, tool results and user messages alike.
func read(req llmfake.Request) string {
	var parts []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		parts = append([]string{req.Messages[i].Content}, parts...)
	}
	return strings.Join(parts, "\n\n")
}

// checkMode checks that a request is in the mode: native ones offer the
// tools and teach no XML; XML ones the opposite.
func checkMode(t *testing.T, m mode, req llmfake.Request) {
	t.Helper()
	xml := strings.Contains(req.Messages[0].Content, "<use_mcp_tool>")
	if m.native() && (xml || !slices.Contains(req.ToolNames(), "echo__echo") || req.ParallelToolCalls == nil || !*req.ParallelToolCalls) {
		t.Errorf("native request: XML taught %v, tools %v", xml, req.ToolNames())
	}
	if !m.native() && (!xml || len(req.Tools) > 0) {
		t.Errorf("XML request: XML taught %v, tools %v", xml, req.ToolNames())
	}
}

func TestModesToolRoundTrip(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script("Echoing.\n"+echo("hi"), complete("It said hi."), echo("again"), "Done again."), setup{})
			r := e.say("echo hi")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "It said hi." {
				t.Fatalf("last event = %+v", got)
			}
			if s := r.kinds(agent.EventToolStart); len(s) != 1 || s[0].Tool != "echo" {
				t.Errorf("tool starts %+v", s)
			}
			// The visible text streamed, growing, no tag in it.
			texts := r.kinds(agent.EventText)
			if len(texts) < 2 || texts[len(texts)-1].Text != "Echoing." {
				t.Errorf("text events %+v", texts)
			}
			for _, ev := range texts {
				if strings.Contains(ev.Text, "<") || !strings.HasPrefix("Echoing.", ev.Text) {
					t.Errorf("text event %q", ev.Text)
				}
			}
			r = e.say("and again")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Done again." {
				t.Fatalf("second turn: last event = %+v", got)
			}
			calls := answered(e, m)
			if len(calls) != 4 {
				t.Fatalf("%d model calls answered, want 4", len(calls))
			}
			for _, c := range calls {
				checkMode(t, m, c.Request)
			}
			if got := read(calls[1].Request); !strings.Contains(got, echoed("hi")) {
				t.Errorf("model read %q, want the result", got)
			}
			if m.rejects {
				if n := len(e.model.Calls()) - len(calls); n != 1 {
					t.Errorf("tools refused %d times, want once: the refusal is remembered", n)
				}
			}
			// Stored the same way in every mode: the reply with its call
			// as XML, the result a tool message of its own.
			h := e.history()
			if len(h) != 8 || h[1].Role != agent.RoleAssistant || len(executor.Calls(toolcall.Parse(h[1].Content))) != 1 || h[2].Role != agent.RoleTool {
				t.Errorf("history %+v", h)
			}
		})
	}
}

// A tool call, a typed one and a resource read in one reply reach
// hub/testdata/echo and their results the model, in every way of calling
// tools (natively, the resource read is the access_mcp_resource
// function); the audit log has the three. (hub's TestInteropEverything
// makes such calls of the npm reference server.)
func TestModesToolsAndResource(t *testing.T) {
	t.Parallel()
	const readCall = "<access_mcp_resource>\n<server_name>echo</server_name>\n<uri>echo://dynamic/1</uri>\n</access_mcp_resource>"
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(
				useTool("echo", "echo", `{"message": "hi there"}`)+"\n"+useTool("echo", "add", `{"a": 2, "b": 3}`)+"\n"+readCall,
				complete("All three."),
			), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo", "add", "resource:echo://*")}})
			r := e.say("echo, add and read")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "All three." {
				t.Fatalf("last event = %+v", got)
			}
			res := read(answered(e, m)[1].Request)
			for _, want := range []string{
				"[use_mcp_tool for 'echo' on 'echo'] Result:\n```\nhi there",
				"[use_mcp_tool for 'add' on 'echo'] Result:\n```\nThe sum of 2 and 3 is 5.",
				"[access_mcp_resource for 'echo://dynamic/1' on 'echo'] Result:\n```\nDynamic text 1",
			} {
				if !strings.Contains(res, want) {
					t.Errorf("the model read:\n%s\nwant %q", res, want)
				}
			}
			if a := e.audit(); len(a) != 3 {
				t.Errorf("audit has %d calls, want 3", len(a))
			}
		})
	}
}

// The tool_calls of a reply and the tool messages answering them: every
// id answered, in order, right after its reply (the fake refuses the
// request otherwise).
func TestNativeHistoryOnTheWire(t *testing.T) {
	t.Parallel()
	m := modes[1]
	e := m.env(t, m.script(echo("one")+"\n"+echo("two"), "Both done."), setup{})
	e.say("echo twice")
	req := e.model.Calls()[1].Request
	var roles []string
	for _, msg := range req.Messages {
		roles = append(roles, msg.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "tool"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	a := req.Messages[2]
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].Function.Name != "echo__echo" {
		t.Fatalf("assistant tool calls %+v", a.ToolCalls)
	}
	for i, want := range []string{"one", "two"} {
		tm := req.Messages[3+i]
		if tm.ToolCallID != a.ToolCalls[i].ID || !strings.Contains(tm.Content, echoed(want)) {
			t.Errorf("tool message %d: id %q content %q; want id %q and result %q", i, tm.ToolCallID, tm.Content, a.ToolCalls[i].ID, want)
		}
	}
}

func TestModesApproval(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		for _, approve := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/approve=%v", m.name, approve), func(t *testing.T) {
				t.Parallel()
				servers := map[string]any{"echo": testenv.EchoEntry(t, "echo")}
				e := m.env(t, m.script("Adding.\n"+useTool("echo", "add", sum), complete("Finished.")), setup{servers: servers})
				r := e.say("add 2 and 3")
				ev := r.last(t)
				if ev.Kind != agent.EventApproval || ev.Approval.Tool != "add" || ev.Approval.Arguments != `{"a":2,"b":3}` {
					t.Fatalf("last event = %+v", ev)
				}
				if n := len(e.audit()); n != 0 {
					t.Fatalf("%d calls ran before the approval", n)
				}
				r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ev.Approval.PendingID, Approve: approve}})
				if err != nil {
					t.Fatal(err)
				}
				if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Finished." {
					t.Fatalf("last event = %+v", got)
				}
				want := "The user denied this operation."
				if approve {
					want = "The sum of 2 and 3 is 5."
				}
				calls := answered(e, m)
				if got := read(calls[len(calls)-1].Request); !strings.Contains(got, want) {
					t.Errorf("model read %q, want %q", got, want)
				}
			})
		}
	}
}

// A tool that needs the user's consent comes on a consent card in every
// mode, even auto-approved.
func TestModesConsent(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			servers := map[string]any{"echo": testenv.EchoEntry(t, "echo", "keep")}
			e := m.env(t, m.script(useTool("echo", "keep", `{"mode": "write"}`), "Kept."), setup{servers: servers, config: func(c *wiring) { c.AutoApproveAll = true }})
			ev := e.say("keep it").last(t)
			if ev.Kind != agent.EventApproval || !ev.Approval.Consent {
				t.Fatalf("last event = %+v, want a consent card", ev)
			}
		})
	}
}

func TestModesFollowupQuestion(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ask := "<ask_followup_question><question>Which city?</question><options>[\"Paris\", \"Tokyo\"]</options></ask_followup_question>"
			e := m.env(t, m.script("Let me ask.\n"+ask, complete("Paris it is.")), setup{})
			ev := e.say("weather?").last(t)
			if ev.Kind != agent.EventQuestion || ev.Question.Text != "Which city?" || !slices.Equal(ev.Question.Options, []string{"Paris", "Tokyo"}) || ev.Text != "Let me ask." {
				t.Fatalf("last event = %+v", ev)
			}
			r, err := e.turn(agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: ev.Question.PendingID, Option: 0}})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Paris it is." {
				t.Fatalf("last event = %+v", got)
			}
			calls := answered(e, m)
			if got := read(calls[1].Request); !strings.Contains(got, "<answer>Paris</answer>") {
				t.Errorf("model read %q, want the answer", got)
			}
		})
	}
}

// Several calls in one reply run concurrently and their results come
// back in the order written.
func TestModesParallelCalls(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			meet := func(int) string { return useTool("echo", "meet", `{"n": 3}`) }
			calls := echo("first") + "\n" + meet(1) + "\n" + meet(2) + "\n" + meet(3) + "\n" + echo("last")
			e := m.env(t, m.script(calls, "All met."), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo", "meet")}})
			if got := e.say("meet").last(t); got.Kind != agent.EventAnswer {
				t.Fatalf("last event = %+v", got)
			}
			got := read(answered(e, m)[1].Request)
			first, last := strings.Index(got, echoed("first")), strings.Index(got, echoed("last"))
			if first < 0 || last < first || strings.Count(got, "met") != 3 {
				t.Errorf("results out of order or missing: %q", got)
			}
		})
	}
}

func TestModesBadCalls(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, reply, want string }{
		{"unknown tool", useTool("echo", "ecko", `{"message":"x"}`), `did you mean "echo"?`},
		{"unknown server", useTool("ecoh", "echo", `{"message":"x"}`), `Did you mean "echo"?`},
		{"invalid JSON", useTool("echo", "echo", `{"message": "x",,}`), "not valid"},
		{"schema violation", useTool("echo", "add", `{"a": "one", "b": 2}`), "do not match its input schema"},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				e := m.env(t, m.script(tt.reply, echo("fixed"), complete("done")), setup{})
				if got := e.say("go").last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
					t.Fatalf("last event = %+v", got)
				}
				calls := answered(e, m)
				if fb := read(calls[1].Request); !strings.Contains(fb, tt.want) {
					t.Errorf("feedback %q lacks %q", fb, tt.want)
				}
				if tp := *calls[1].Request.Temperature; tp < 0.39 || tp > 0.41 {
					t.Errorf("temperature after a mistake = %v, want 0.4", tp)
				}
				if res := read(calls[2].Request); !strings.Contains(res, echoed("fixed")) {
					t.Errorf("corrected call result = %q", res)
				}
			})
		}
	}
}

func TestModesMistakeLimit(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.handler(func(llmfake.Call) llmfake.Reply { return m.reply(useTool("echo", "nope", "{}")) }),
				setup{config: func(c *wiring) { c.Temperature = 0.15 }})
			if got := e.say("go").last(t); got.Kind != agent.EventError || !strings.Contains(got.Text, "struggling") {
				t.Fatalf("last event = %+v", got)
			}
			calls := answered(e, m)
			if len(calls) != agent.MaxMistakes {
				t.Fatalf("model answered %d times, want %d", len(calls), agent.MaxMistakes)
			}
			for i, want := range []float64{0.15, 0.05, 0} {
				if tp := *calls[i].Request.Temperature; tp < want-0.001 || tp > want+0.001 {
					t.Errorf("call %d temperature = %v, want %v", i+1, tp, want)
				}
			}
		})
	}
}

func TestModesTurnLimit(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.handler(func(llmfake.Call) llmfake.Reply { return m.reply(echo("again")) }),
				setup{config: func(c *wiring) { c.MaxTurns = 3 }})
			got := e.say("loop forever").last(t)
			if got.Kind != agent.EventError || !strings.Contains(got.Text, "stopped after 3 model calls") {
				t.Fatalf("last event = %+v", got)
			}
			if n := len(e.audit()); n != 3 {
				t.Errorf("audit has %d calls, want 3", n)
			}
		})
	}
}

// The reply and its calls are stored before any call runs, in every
// mode; after a crash mid-call, the model reads "outcome unknown" as the
// call's result, and nothing runs again blindly.
func TestModesWriteAheadAndCrash(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script("Echoing.\n"+echo("write-ahead"), complete("done"), "I will not send it twice."), setup{})
			var seen []store.Message
			err := e.agent.Turn(context.Background(), agent.Request{Caller: alice, Text: "echo please"}, func(ev agent.Event) {
				if ev.Kind == agent.EventToolStart {
					seen = e.history()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != 2 || seen[1].Role != agent.RoleAssistant || len(executor.Calls(toolcall.Parse(seen[1].Content))) != 1 {
				t.Errorf("history when the tool started = %+v, want the message and the reply with its call", seen)
			}
			// What the write-ahead leaves when the bot dies mid-call.
			if _, err := e.db.AppendTurn(context.Background(), store.TurnWrite{ChatID: alice.ChatID, ConversationID: seen[0].ConversationID, Messages: []store.Message{
				{Role: agent.RoleUser, Content: "send the invoice"},
				{Role: agent.RoleAssistant, Content: "Sending.\n" + echo("invoice")},
			}}); err != nil {
				t.Fatal(err)
			}
			e.restart()
			r := e.say("send the invoice")
			if got := r.last(t); got.Kind != agent.EventAnswer {
				t.Fatalf("last event %+v", got)
			}
			if s := r.kinds(agent.EventToolStart); len(s) != 0 {
				t.Errorf("a tool ran: %+v", s)
			}
			calls := answered(e, m)
			if got := read(calls[len(calls)-1].Request); !strings.Contains(got, agent.NoteUnknown) {
				t.Errorf("model read %q, want the outcome unknown", got)
			}
		})
	}
}

// A conversation switches mode, both ways, between turns: what the
// model reads is rendered from the stored turns for the mode in use, and
// the fake refuses any request whose tool history is malformed.
func TestModeSwitchMidConversation(t *testing.T) {
	t.Parallel()
	for _, order := range [][]mode{{modes[0], modes[1], modes[0]}, {modes[1], modes[0], modes[1]}} {
		t.Run(order[0].name+"-"+order[1].name+"-"+order[2].name, func(t *testing.T) {
			t.Parallel()
			var replies []llmfake.Reply
			for i, m := range order {
				replies = append(replies, m.reply(echo(fmt.Sprint("turn", i))), m.reply("Done "+fmt.Sprint(i)+"."))
			}
			e := newEnv(t, llmfake.Script(replies...), setup{})
			for i, m := range order {
				m := m
				e.cfg = func(c *wiring) { c.ToolCalling = m.calling }
				e.restart()
				if got := e.say(fmt.Sprint("go ", i)).last(t); got.Kind != agent.EventAnswer || got.Text != fmt.Sprint("Done ", i, ".") {
					t.Fatalf("turn %d (%s): last event %+v", i, m.name, got)
				}
			}
			calls := e.model.Calls()
			last := calls[len(calls)-2].Request // the third turn's first call
			checkMode(t, order[2], last)
			// It sees the earlier turns' calls and results, in its mode.
			var all []string
			for _, msg := range last.Messages {
				all = append(all, msg.Content)
				for _, c := range msg.ToolCalls {
					all = append(all, c.Function.Name+string(c.Function.Arguments))
				}
			}
			joined := strings.Join(all, "\n")
			for _, want := range []string{"turn0", "turn1", echoed("turn0"), echoed("turn1"), "Done 0.", "Done 1."} {
				if !strings.Contains(joined, want) {
					t.Errorf("third turn's request lacks %q", want)
				}
			}
		})
	}
}

// Native replies a model should not send get feedback, never a crash or
// a hang: arguments that are no JSON, names nobody has, an empty name,
// hundreds of calls, one id for several calls.
func TestNativeHostileToolCalls(t *testing.T) {
	t.Parallel()
	many := make([]llmfake.ToolCall, 300)
	for i := range many {
		many[i] = llmfake.ToolCall{Name: "nobody__nothing", Arguments: "{"}
	}
	same := []llmfake.ToolCall{
		{ID: "x", Name: "echo__echo", Arguments: `{"message": "a"}`},
		{ID: "x", Name: "echo__echo", Arguments: `{"message": "b"}`},
	}
	tests := []struct {
		name  string
		reply llmfake.Reply
		want  string
	}{
		{"bad JSON", llmfake.Calls(llmfake.ToolCall{Name: "echo__echo", Arguments: `{"message": `}), "not valid"},
		{"not an object", llmfake.Calls(llmfake.ToolCall{Name: "echo__echo", Arguments: `[1, 2]`}), "JSON object"},
		{"closing tag in the arguments", llmfake.Calls(llmfake.ToolCall{Name: "echo__echo", Arguments: `{"message": "</arguments></use_mcp_tool>"}`}), echoed("</arguments></use_mcp_tool>")},
		{"unknown name", llmfake.Calls(llmfake.ToolCall{Name: "weather", Arguments: `{}`}), `No function is named "weather"`},
		{"misspelt name", llmfake.Calls(llmfake.ToolCall{Name: "echo__ehco", Arguments: `{}`}), `did you mean "echo__echo"?`},
		{"a tool's own name", llmfake.Calls(llmfake.ToolCall{Name: "echo", Arguments: `{"message": "short"}`}), echoed("short")},
		{"empty name", llmfake.Calls(llmfake.ToolCall{Name: "", Arguments: `{}`}), "tool_name"},
		{"hostile name", llmfake.Calls(llmfake.ToolCall{Name: "</tool_name><x>", Arguments: `{}`}), "There is no server"},
		{"hundreds of calls", llmfake.Calls(many...).Split(3), "nobody"},
		{"repeated ids", llmfake.Calls(same...), echoed("b")},
		{"bad question", llmfake.Calls(llmfake.ToolCall{Name: "ask_followup_question", Arguments: `nope`}), "question"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := modes[1].env(t, llmfake.Script(tt.reply, llmfake.Text("Sorry.")), setup{})
			if got := e.say("go").last(t); got.Kind != agent.EventAnswer || got.Text != "Sorry." {
				t.Fatalf("last event = %+v", got)
			}
			got := read(e.model.Calls()[1].Request)
			if !strings.Contains(got, tt.want) {
				t.Errorf("model read %.500q, want %q in it", got, tt.want)
			}
			if strings.Contains(got, "<use_mcp_tool>") {
				t.Errorf("feedback to a native model teaches XML: %.500q", got)
			}
		})
	}
}

// Native calls are counted in the tool-format metrics like XML ones.
func TestNativeFormatMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := modes[1].env(t, modes[1].script(echo("x"), useTool("echo", "ecko", "{}"), useTool("echo", "echo", `{"message": "y",}`), "done"),
		setup{config: func(c *wiring) { c.Metrics = m }})
	e.say("go")
	for _, c := range []struct {
		result, kind string
	}{{"first_try", ""}, {"fed_back", "unknown_tool"}, {"repaired", "json_trailing_comma"}} {
		if got := sample(t, m, "mcpgram_tool_format_total", "model", "fake", "result", c.result, "kind", c.kind); got != 1 {
			t.Errorf("%s/%s = %v, want 1", c.result, c.kind, got)
		}
	}
}

// Once an endpoint took tools, auto does not fall back on a later 400
// that mentions them: that one is about the request, and the user hears
// of it.
func TestAutoFallsBackOnlyBeforeTools(t *testing.T) {
	t.Parallel()
	m := modes[2]
	e := m.env(t, llmfake.Script(
		m.reply("Hello."),
		llmfake.Reply{Status: 400, Error: "Invalid 'tools[0].function.name'"},
	), setup{})
	if got := e.say("hi").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	if got := e.say("again").last(t); got.Kind != agent.EventError {
		t.Fatalf("last event = %+v, want the error", got)
	}
	if n := len(e.model.Calls()); n != 2 {
		t.Errorf("%d model calls, want 2: no XML retry", n)
	}
}

// /retry in native mode: a call the replaced answer made waits for
// approval when the model makes it again, as in XML.
func TestNativeRetry(t *testing.T) {
	t.Parallel()
	m := modes[1]
	e := m.env(t, m.script(echo("once"), complete("first answer"), echo("once"), complete("second answer")), setup{})
	if got := e.say("say once").last(t); got.Kind != agent.EventAnswer || got.Text != "first answer" {
		t.Fatalf("first turn: %+v", got)
	}
	r, err := e.turn(agent.Request{Caller: alice, Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	got := r.last(t)
	if got.Kind != agent.EventApproval || got.Approval.Tool != "echo" {
		t.Fatalf("the retry's repeated call: %+v, want an approval", got)
	}
	r, err = e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: got.Approval.PendingID, Approve: true}})
	if err != nil || r.last(t).Text != "second answer" {
		t.Fatalf("after approving: %+v, %v", r.All(), err)
	}
	if n := len(e.audit()); n != 2 {
		t.Errorf("audit has %d calls, want 2", n)
	}
}

// A chat's profile carries its way of calling tools: switching model
// with SetChatProfile switches it in the same conversation, and what the
// other model did is rendered for the new one.
func TestProfileToolCalling(t *testing.T) {
	t.Parallel()
	local := llmfake.New(t, llmfake.Native(llmfake.Script(llmfake.Text(echo("native")), llmfake.Text("Done natively."))))
	e := newEnv(t, llmfake.Script(llmfake.Text(echo("xml")), llmfake.Text("Done in XML.")), setup{config: func(w *wiring) {
		w.Vision = true
		w.Others = []agent.Model{newModel(t, local, mcpgram.Profile{Name: "local", Model: "local", Temperature: 0.5, ToolCalling: mcpgram.ToolCallingNative})}
	}})
	if got := e.say("echo xml").last(t); got.Text != "Done in XML." {
		t.Fatalf("default profile: %+v", got)
	}
	if err := agent.NewPrefs(e.agent).SetChatProfile(t.Context(), alice.ChatID, "local"); err != nil {
		t.Fatal(err)
	}
	if got := e.say("echo native").last(t); got.Text != "Done natively." {
		t.Fatalf("local profile: %+v", got)
	}
	checkMode(t, modes[0], e.model.Calls()[0].Request)
	calls := local.Calls()
	checkMode(t, modes[1], calls[0].Request)
	// The XML turn's call and result, as tool_calls and a tool message.
	msgs := calls[0].Request.Messages
	if len(msgs) < 4 || len(msgs[2].ToolCalls) != 1 || msgs[3].Role != "tool" || !strings.Contains(msgs[3].Content, echoed("xml")) {
		t.Errorf("the native model read the XML turn as %+v", msgs)
	}
}

// A photo reaches the model in every mode: as an image part of the user's
// message on each call of its turn, tool round trip included, and again
// in a later turn.
func TestModesImages(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(echo("a cat"), complete("It is a cat."), complete("Still a cat.")),
				setup{config: func(c *wiring) { c.Vision = true }})
			img := llm.Image{MIMEType: "image/png", Data: []byte("\x89PNG")}
			if _, err := e.turn(agent.Request{Caller: alice, Text: photoText, Images: []llm.Image{img}}); err != nil {
				t.Fatal(err)
			}
			e.say("and now?")
			calls := answered(e, m)
			if len(calls) != 3 {
				t.Fatalf("%d model calls answered, want 3", len(calls))
			}
			for i, c := range calls {
				if got := images(c); len(got) != 1 || got[0] != "data:image/png;base64,iVBORw==" {
					t.Errorf("call %d sent images %q, want the photo", i+1, got)
				}
			}
		})
	}
}
