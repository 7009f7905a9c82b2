package agent_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/toolcall"
)

func TestToolRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text("Let me echo that.\n"+echo("hi there")),
		llmfake.Text(complete("The server said: hi there")),
	), setup{})
	r := e.say("please echo hi there")

	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "The server said: hi there" {
		t.Fatalf("last event = %+v, want the answer", got)
	}
	starts, ends := r.kinds(agent.EventToolStart), r.kinds(agent.EventToolEnd)
	if len(starts) != 1 || starts[0].Server != "echo" || starts[0].Tool != "echo" {
		t.Errorf("tool starts = %+v", starts)
	}
	if len(ends) != 1 || !ends[0].OK || ends[0].Duration <= 0 {
		t.Errorf("tool ends = %+v", ends)
	}
	for _, ev := range r.kinds(agent.EventText) {
		if strings.Contains(ev.Text, "<") {
			t.Errorf("EventText shows XML: %q", ev.Text)
		}
	}

	calls := e.model.Calls()
	if len(calls) != 2 {
		t.Fatalf("model called %d times, want 2", len(calls))
	}
	first, second := calls[0].Request.Messages, calls[1].Request.Messages
	if first[0].Role != "system" || first[0].Content != prompt.Build(e.hub.Catalog()) {
		t.Errorf("first message is not the system prompt: %.200q", first[0])
	}
	if first[0].Content != second[0].Content {
		t.Error("system prompt changed between calls of one catalog")
	}
	if got := first[len(first)-1]; got.Role != "user" || got.Content != "please echo hi there" {
		t.Errorf("first call ends with %+v", got)
	}
	if len(second) != 4 || second[2].Role != "assistant" || second[3].Role != "user" {
		t.Fatalf("second call messages = %+v", second)
	}
	if res := second[3].Content; !strings.Contains(res, "[use_mcp_tool for 'echo' on 'echo'] "+echoed("hi there")) {
		t.Errorf("tool result sent = %q", res)
	}

	h := e.history()
	wantRoles := []string{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}
	if len(h) != len(wantRoles) {
		t.Fatalf("history has %d messages, want %d", len(h), len(wantRoles))
	}
	for i, m := range h {
		if m.Role != wantRoles[i] {
			t.Errorf("history[%d].Role = %q, want %q", i, m.Role, wantRoles[i])
		}
	}
	if h[1].PromptTokens == 0 || h[1].CompletionTokens == 0 {
		t.Errorf("token usage not stored: %+v", h[1])
	}
	audit := e.audit()
	if len(audit) != 1 || audit[0].Tool != "echo" || audit[0].Status != "ok" || audit[0].UserID != alice.UserID || audit[0].Arguments != `{"message":"hi there"}` {
		t.Errorf("audit = %+v", audit)
	}
}

func TestPlainTextIsTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(llmfake.Text("<thinking>easy</thinking>Hello! How can I help?")), setup{})
	r := e.say("hi")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Hello! How can I help?" {
		t.Fatalf("last event = %+v", got)
	}
	if n := len(e.model.Calls()); n != 1 {
		t.Errorf("model called %d times, want 1", n)
	}
}

func TestFollowupQuestion(t *testing.T) {
	t.Parallel()
	ask := "<ask_followup_question>\n<question>Which colour?</question>\n<options>[\"Red\", \"Blue\"]</options>\n</ask_followup_question>"
	tests := []struct {
		name   string
		answer func(id int64) agent.Request
		want   string
	}{
		{"pressed", func(id int64) agent.Request {
			return agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: id, Option: 1}}
		}, "<answer>Blue</answer>"},
		{"typed", func(int64) agent.Request { return agent.Request{Caller: alice, Text: "green, please"} }, "<answer>green, please</answer>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(llmfake.Text(ask), llmfake.Text(complete("Painted."))), setup{})
			q := e.say("paint it").last(t)
			if q.Kind != agent.EventQuestion || q.Question == nil || q.Question.Text != "Which colour?" || len(q.Question.Options) != 2 {
				t.Fatalf("last event = %+v, want the question", q)
			}
			// Another user cannot answer with a button.
			bob := alice
			bob.UserID = "222"
			if _, err := e.turn(agent.Request{Caller: bob, Answer: &agent.Answer{PendingID: q.Question.PendingID}}); !errors.Is(err, agent.ErrNotYours) {
				t.Errorf("other user's press: err = %v, want ErrNotYours", err)
			}

			r, err := e.turn(tt.answer(q.Question.PendingID))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Painted." {
				t.Fatalf("last event = %+v", got)
			}
			if got := e.model.Calls()[1].Request.Last(); got != tt.want {
				t.Errorf("model got %q, want %q", got, tt.want)
			}
			// The question is answered: a second press is stale.
			if _, err := e.turn(agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: q.Question.PendingID}}); !errors.Is(err, agent.ErrStale) {
				t.Errorf("second press: err = %v, want ErrStale", err)
			}
		})
	}
}

func TestBadCallsAreCorrected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply string
		want  string // in the feedback the model gets
	}{
		{"unknown server", useTool("ecoh", "ecko", `{"message":"x"}`), `Did you mean "echo"?`},
		{"unknown tool", useTool("echo", "ecko", `{"message":"x"}`), `did you mean "echo"?`},
		{"invalid JSON", useTool("echo", "echo", `{"message": "x",,}`), "not valid"},
		{"schema violation", useTool("echo", "add", `{"a": "one", "b": 2}`), "do not match its input schema"},
		{"missing parameter", "<use_mcp_tool><tool_name>nothing</tool_name><arguments>{}</arguments></use_mcp_tool>", "'server_name'"},
		{"cut off before the arguments end", "<use_mcp_tool><server_name>echo</server_name><tool_name>echo</tool_name><arguments>{\"message\": \"x", "cut off"},
		{"cut off", "<use_mcp_tool><server_name>echo</server_name><tool_name>echo", "cut off"},
		{"bad options", "<ask_followup_question><question>Q?</question><options>[\"only one\"]</options></ask_followup_question>", "2 to 5"},
		{"empty reply", "<thinking>hmm</thinking>", "no visible text"},
		{"tool name as a tag", "<echo><message>hi</message></echo>", "You wrote <echo> as a tag"},
		{"another family's syntax", "Checking.\n<tool_call>\n<invoke name=\"echo\"><parameter name=\"message\">x</parameter></invoke>\n</tool_call>", "The <tool_call> format is not one this bot runs"},
		{"another family's syntax, cut off", "<function_calls><invoke name=\"echo\">", "Call the tools of MCP servers with use_mcp_tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(
				llmfake.Text(tt.reply),
				llmfake.Text(echo("fixed")),
				llmfake.Text(complete("done")),
			), setup{})
			r := e.say("go")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
				t.Fatalf("last event = %+v", got)
			}
			for _, ev := range r.All() {
				for _, tag := range toolcall.Tags() {
					if strings.Contains(ev.Text, "<"+tag+">") {
						t.Errorf("event %+v shows <%s>", ev, tag)
					}
				}
			}
			calls := e.model.Calls()
			if fb := calls[1].Request.Last(); !strings.Contains(fb, tt.want) {
				t.Errorf("feedback %q lacks %q", fb, tt.want)
			}
			if res := calls[2].Request.Last(); !strings.Contains(res, echoed("fixed")) {
				t.Errorf("corrected call result = %q", res)
			}
			// One mistake cools the next call by 0.1.
			if tp := *calls[1].Request.Temperature; tp < 0.39 || tp > 0.41 {
				t.Errorf("temperature after a mistake = %v, want 0.4", tp)
			}
			if tp := *calls[2].Request.Temperature; tp < 0.49 || tp > 0.51 {
				t.Errorf("temperature after a good call = %v, want 0.5", tp)
			}
		})
	}
}

// Near misses whose meaning is plain run at once: no feedback, no mistake
// counted, the temperature untouched.
func TestNearMissesRunFirstTime(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, reply string }{
		{"trailing comma", useTool("echo", "echo", `{"message": "x",}`)},
		{"server left out", "<use_mcp_tool><tool_name>echo</tool_name><arguments>{\"message\": \"x\"}</arguments></use_mcp_tool>"},
		{"server__tool", useTool("", "echo__echo", `{"message": "x"}`)},
		{"cut off after the arguments", "<use_mcp_tool><server_name>echo</server_name><tool_name>echo</tool_name><arguments>{\"message\": \"x\"}</argum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(
				llmfake.Text(tt.reply),
				llmfake.Text(complete("done")),
			), setup{})
			r := e.say("go")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
				t.Fatalf("last event = %+v", got)
			}
			calls := e.model.Calls()
			if res := calls[1].Request.Last(); !strings.Contains(res, echoed("x")) {
				t.Errorf("result = %q, want the call run", res)
			}
			if tp := *calls[1].Request.Temperature; tp < 0.49 || tp > 0.51 {
				t.Errorf("temperature after a repaired call = %v, want 0.5", tp)
			}
		})
	}
}

func TestMistakeLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply {
		return llmfake.Text(useTool("echo", "nope", "{}"))
	}, setup{config: func(c *wiring) { c.Temperature = 0.15 }})
	r := e.say("go")
	if got := r.last(t); got.Kind != agent.EventError || !strings.Contains(got.Text, "struggling") {
		t.Fatalf("last event = %+v", got)
	}
	calls := e.model.Calls()
	if len(calls) != agent.MaxMistakes {
		t.Fatalf("model called %d times, want %d", len(calls), agent.MaxMistakes)
	}
	for i, want := range []float64{0.15, 0.05, 0} {
		if tp := *calls[i].Request.Temperature; tp < want-0.001 || tp > want+0.001 {
			t.Errorf("call %d temperature = %v, want %v", i+1, tp, want)
		}
	}
}

func TestTurnLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		return llmfake.Text(echo("again"))
	}, setup{config: func(c *wiring) { c.MaxTurns = 3 }})
	r := e.say("loop forever")
	got := r.last(t)
	if got.Kind != agent.EventError || !strings.Contains(got.Text, "stopped after 3 model calls") || !strings.Contains(got.Text, "echo on echo (ok)") {
		t.Fatalf("last event = %+v", got)
	}
	if n := len(e.model.Calls()); n != 3 {
		t.Errorf("model called %d times, want 3", n)
	}
	if n := len(e.audit()); n != 3 {
		t.Errorf("audit has %d calls, want 3", n)
	}
}

func TestModelErrors(t *testing.T) {
	t.Parallel()
	t.Run("retried", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, llmfake.Script(
			llmfake.Reply{Status: 429, RetryAfter: "1"},
			llmfake.Reply{Status: 500},
			llmfake.Text("fine"),
		), setup{})
		start := time.Now()
		if got := e.say("hi").last(t); got.Kind != agent.EventAnswer || got.Text != "fine" {
			t.Fatalf("last event = %+v", got)
		}
		if el := time.Since(start); el < time.Second {
			t.Errorf("answered after %v, before Retry-After", el)
		}
	})
	t.Run("dropped stream starts the text again", func(t *testing.T) {
		t.Parallel()
		cut := llmfake.Text("Half a thought that never ends").Split(5)
		cut.DropAfter = 3
		e := newEnv(t, llmfake.Script(cut, llmfake.Text("Whole answer.").Split(4)), setup{})
		r := e.say("hi")
		if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Whole answer." {
			t.Fatalf("last event = %+v", got)
		}
		var texts []string
		for _, ev := range r.kinds(agent.EventText) {
			texts = append(texts, ev.Text)
		}
		reset := slices.Index(texts, "")
		if reset < 1 || !strings.HasPrefix(texts[reset-1], "Half") || texts[len(texts)-1] != "Whole answer." {
			t.Errorf("text events = %q, want the half reply, a reset, then the whole one", texts)
		}
	})
	t.Run("final failure keeps the message", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
			if c.N <= 4 {
				return llmfake.Reply{Status: 503}
			}
			return llmfake.Text("back")
		}, setup{})
		r, err := e.turn(agent.Request{Caller: alice, Text: "first try"})
		if err == nil {
			t.Error("Turn returned nil after the model failed")
		}
		got := r.last(t)
		if got.Kind != agent.EventError || !strings.Contains(got.Text, "having trouble") {
			t.Fatalf("last event = %+v", got)
		}
		// The operator's front end reads what the endpoint answered.
		var le *llm.Error
		if !errors.As(got.Err, &le) || le.StatusCode != 503 {
			t.Errorf("the event's Err = %v, want the model's *llm.Error with HTTP 503", got.Err)
		}
		if h := e.history(); len(h) != 1 || h[0].Content != "first try" {
			t.Fatalf("history = %+v, want the user's message", h)
		}
		if got := e.say("again").last(t); got.Kind != agent.EventAnswer {
			t.Fatalf("next turn: %+v", got)
		}
		if got := e.model.Calls()[4].Request.Last(); got != "first try\n\nagain" {
			t.Errorf("next call ends with %q, want both messages", got)
		}
	})
}

func TestContextBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("ok") }, setup{
		config: func(c *wiring) { c.ContextTokens = 1 },
	})
	long := strings.Repeat("x", 400)
	e.say("one " + long)
	e.say("two " + long)
	e.say("three " + long)
	calls := e.model.Calls()
	// Over budget, each call keeps only the system prompt and its turn.
	last := calls[2].Request.Messages
	if len(last) != 2 || last[0].Role != "system" || !strings.HasPrefix(last[1].Content, "three") {
		t.Errorf("third call sent %d messages: %+v", len(last), last)
	}

	// With room for about two turns, the oldest goes first. The prompt
	// lists every tool (no search at this budget), as the sum assumes.
	e2 := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("ok") }, setup{
		config: func(c *wiring) {
			c.ContextTokens = len(prompt.Build(e.hub.Catalog()))/4 + 2*(100+10) + 40
			c.ToolSearch = "off"
		},
	})
	e2.say("one " + long)
	e2.say("two " + long)
	e2.say("three " + long)
	msgs := e2.model.Calls()[2].Request.Messages
	var firsts []string
	for _, m := range msgs[1:] {
		if m.Role == "user" {
			firsts = append(firsts, m.Content[:3])
		}
	}
	if strings.Join(firsts, ",") != "two,thr" {
		t.Errorf("third call kept turns %v, want two and three", firsts)
	}
	if h := e2.history(); len(h) != 6 {
		t.Errorf("store has %d messages, want all 6", len(h))
	}
}

// An answer to a question continues the turn that asked it: the budget
// keeps them together.
func TestContextBudgetKeepsTheQuestion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text("earlier reply"),
		llmfake.Text("<ask_followup_question><question>Which?</question></ask_followup_question>"),
		llmfake.Text("ok"),
	), setup{config: func(c *wiring) { c.ContextTokens = 1 }})
	e.say("old turn")
	e.say("pick one")
	e.say("this one")
	msgs := e.model.Calls()[2].Request.Messages
	var got []string
	for _, m := range msgs[1:] {
		got = append(got, m.Role+":"+m.Content)
	}
	want := []string{"user:pick one", "assistant:<ask_followup_question><question>Which?</question></ask_followup_question>", "user:<answer>this one</answer>"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", got, want)
	}
}

func TestSeveralToolsInOneMessage(t *testing.T) {
	t.Parallel()
	slow := useTool("echo", "sleep", `{"ms": 1000}`)
	e := newEnv(t, llmfake.Script(
		llmfake.Text("Three at once:\n"+slow+"\n"+echo("middle")+"\n"+slow+"\n"+complete("too early")),
		llmfake.Text(complete("all done")),
	), setup{})
	r := e.say("do three things")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "all done" {
		t.Fatalf("last event = %+v", got)
	}
	// Concurrent: both one-second sleeps started before either ended (the
	// quick echo may end before the second sleep's start is emitted).
	lastStart, firstEnd := -1, -1
	for i, ev := range r.All() {
		switch {
		case ev.Tool != "sleep":
		case ev.Kind == agent.EventToolStart:
			lastStart = i
		case ev.Kind == agent.EventToolEnd && firstEnd < 0:
			firstEnd = i
		}
	}
	if lastStart < 0 || firstEnd < 0 || firstEnd < lastStart {
		t.Errorf("events %v: a sleep started only after the other ended", kindsOf(r.All()))
	}
	res := e.model.Calls()[1].Request.Last()
	i1 := strings.Index(res, "[use_mcp_tool for 'sleep'")
	i2 := strings.Index(res, echoed("middle"))
	i3 := strings.LastIndex(res, "[use_mcp_tool for 'sleep'")
	i4 := strings.Index(res, "Not acted on")
	if i1 < 0 || i2 < i1 || i3 < i2 || i4 < i3 {
		t.Errorf("results out of order (%d %d %d %d):\n%s", i1, i2, i3, i4, res)
	}
	if n := len(r.kinds(agent.EventToolEnd)); n != 3 {
		t.Errorf("%d tool ends, want 3", n)
	}
}

// peakHub counts how many tool calls run at once.
type peakHub struct {
	agent.Hub
	mu        sync.Mutex
	cur, peak int
}

func (h *peakHub) CallTool(ctx context.Context, c mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error) {
	h.mu.Lock()
	h.cur++
	h.peak = max(h.peak, h.cur)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cur--
		h.mu.Unlock()
	}()
	return h.Hub.CallTool(ctx, c, server, tool, args)
}

// Seven one-second calls in one message: five run at once, then two, and
// all seven results go back in order.
func TestAtMostFiveToolsAtOnce(t *testing.T) {
	t.Parallel()
	calls := slices.Repeat([]string{useTool("echo", "sleep", `{"ms": 1000}`)}, 7)
	var ph *peakHub
	e := newEnv(t, llmfake.Script(
		llmfake.Text(strings.Join(calls, "\n")),
		llmfake.Text(complete("all done")),
	), setup{config: func(c *wiring) {
		ph = &peakHub{Hub: c.Hub}
		c.Hub = ph
	}})
	if got := e.say("seven slow things").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	if ph.peak != executor.DefaultMaxParallel {
		t.Errorf("at most %d calls ran at once, want %d", ph.peak, executor.DefaultMaxParallel)
	}
	if n := strings.Count(e.model.Calls()[1].Request.Last(), "[use_mcp_tool for 'sleep' on 'echo'] Result:"); n != 7 {
		t.Errorf("%d results reached the model, want 7", n)
	}
}

func TestStreamedTagsSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	reply := "Checking <b>now</b>. <thinking>secret plan</thinking>" + echo("split") + " and then"
	for _, size := range []int{1, 2, 3, 7} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(
				llmfake.Text(reply).Split(size),
				llmfake.Text("All <i>good</i>: <attempt_completion><result>Echoed.</result></attempt_completion>").Split(size),
			), setup{})
			r := e.say("go")
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Echoed." {
				t.Fatalf("last event = %+v", got)
			}
			texts := r.kinds(agent.EventText)
			if len(texts) < 3 {
				t.Errorf("only %d text events for a reply in %d-byte chunks", len(texts), size)
			}
			for _, ev := range texts {
				for _, bad := range []string{"use_mcp_tool", "server_name", "thinking", "secret", "attempt_completion", "<r", "<u", "<t", "<a"} {
					if strings.Contains(ev.Text, bad) {
						t.Errorf("EventText %q shows %q", ev.Text, bad)
					}
				}
			}
			if !strings.Contains(e.model.Calls()[1].Request.Last(), echoed("split")) {
				t.Error("tool did not run from the split reply")
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply llmfake.Reply
		when  agent.EventKind // cancel on this event
	}{
		// The waits are far longer than the limit below, so that only the
		// cancel can end them in time.
		{"during the model's reply", llmfake.Reply{Chunks: []string{"Thinking", " more", " and more"}, ChunkDelay: time.Minute}, agent.EventText},
		{"during a tool call", llmfake.Text(useTool("echo", "sleep", `{"ms": 60000}`)), agent.EventToolStart},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(tt.reply, llmfake.Text("after")), setup{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := &recorder{}
			reached := false
			cancelled := make(chan time.Time, 1)
			emit := func(ev agent.Event) {
				r.emit(ev)
				if ev.Kind == tt.when && !reached {
					reached = true
					// A text event means the stream is under way; a tool
					// call is under way once the server says so.
					go func() {
						if ev.Kind == agent.EventToolStart {
							waitStderr(e.hub, "echo", "echo: sleep started")
						}
						cancelled <- time.Now()
						cancel()
					}()
				}
			}
			err := e.agent.Turn(ctx, agent.Request{Caller: alice, Text: "long job"}, emit)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			if !reached {
				t.Fatal("the turn never reached the point to cancel at")
			}
			// A sanity limit: a cancel takes milliseconds, and the model's
			// silence limit (10s) or the tool (60s) would take longer.
			select {
			case at := <-cancelled:
				if el := time.Since(at); el > 5*time.Second {
					t.Errorf("the turn ended %v after the cancel", el)
				}
			default:
				t.Error("the turn ended before it was cancelled")
			}
			if got := r.last(t); got.Kind != agent.EventError || got.Text != "Stopped." {
				t.Errorf("last event = %+v", got)
			}
			h := e.history()
			if len(h) < 2 || h[0].Content != "long job" || !strings.Contains(h[len(h)-1].Content, "stopped before it finished") {
				t.Errorf("history = %+v, want the message and a stop note", h)
			}
			if a := e.audit(); tt.when == agent.EventToolStart && (len(a) != 1 || a[0].Status != "cancelled") {
				t.Errorf("audit = %+v, want the call as cancelled", a)
			}
			// The chat is free again, and the stopped request stays
			// stopped: the next message reaches the model on its own,
			// after the assistant's note that closed the stopped one.
			if got := e.say("next").last(t); got.Kind != agent.EventAnswer || got.Text != "after" {
				t.Errorf("next turn: %+v", got)
			}
			calls := e.model.Calls()
			msgs := calls[len(calls)-1].Request.Messages
			if n := len(msgs); n < 3 || msgs[n-1].Role != "user" || msgs[n-1].Content != "next" ||
				msgs[n-2].Role != "assistant" || !strings.Contains(msgs[n-2].Content, "It is closed") {
				t.Errorf("the model read after the stop: %+v", msgs)
			}
		})
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text("<ask_followup_question><question>Sure?</question><options>[\"Yes\", \"No\"]</options></ask_followup_question>"),
		llmfake.Text("fresh"),
	), setup{})
	q := e.say("delete everything").last(t)
	if err := e.agent.Reset(context.Background(), alice.ChatID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.turn(agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: q.Question.PendingID}}); !errors.Is(err, agent.ErrStale) {
		t.Errorf("press after reset: err = %v, want ErrStale", err)
	}
	e.say("hello")
	// The typed message is not taken as the answer, and the old
	// conversation is not sent.
	if msgs := e.model.Calls()[1].Request.Messages; len(msgs) != 2 || msgs[1].Content != "hello" {
		t.Errorf("after reset the model got %+v", msgs)
	}
}

// Turns of one chat run one at a time: the second sees the first's reply.
func TestTurnsOfAChatRunInOrder(t *testing.T) {
	t.Parallel()
	first, release := make(chan struct{}, 1), make(chan struct{})
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		if c.N == 1 {
			first <- struct{}{}
			<-release // the first turn holds the chat until the test lets go
			return llmfake.Text("first answer")
		}
		return llmfake.Text("second answer")
	}, setup{})
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo) // before the model server closes, should the test fail early
	done := make(chan *recorder)
	go func() { done <- e.say("one") }()
	<-first
	// A turn cancelled while it waits for the chat ends cleanly too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := &recorder{}
	if err := e.agent.Turn(ctx, agent.Request{Caller: alice, Text: "impatient"}, r.emit); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting turn: err = %v, want DeadlineExceeded", err)
	}
	if got := r.last(t); got.Kind != agent.EventError {
		t.Errorf("waiting turn ended with %+v", got)
	}
	letGo()
	e.say("two")
	<-done
	msgs := e.model.Calls()[1].Request.Messages
	if n := len(msgs); n != 4 || msgs[2].Content != "first answer" {
		t.Errorf("second call got %+v", msgs)
	}
}

// A resource read runs without approval and is audited.
func TestResourceRead(t *testing.T) {
	t.Parallel()
	read := "<access_mcp_resource>\n<server_name>echo</server_name>\n<uri>echo://dynamic/1</uri>\n</access_mcp_resource>"
	e := newEnv(t, llmfake.Script(llmfake.Text(read), llmfake.Text(complete("read it"))), setup{
		servers: map[string]any{"echo": testenv.EchoEntry(t, "echo", "resource:echo://dynamic/*")},
	})
	r := e.say("read resource 1")
	if got := r.last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	if s := r.kinds(agent.EventToolStart); len(s) != 1 || s[0].URI != "echo://dynamic/1" {
		t.Errorf("tool starts = %+v", s)
	}
	if res := e.model.Calls()[1].Request.Last(); !strings.Contains(res, "[access_mcp_resource for 'echo://dynamic/1' on 'echo'] Result:\n```\nDynamic text 1") {
		t.Errorf("model read %q", res)
	}
	if a := e.audit(); len(a) != 1 || a[0].Tool != "access_mcp_resource" || a[0].Status != "ok" || !strings.Contains(a[0].Arguments, "echo://dynamic/1") {
		t.Errorf("audit = %+v", a)
	}
}

// The bundled calculator, through the real hub: the answer carries what
// the tool computed, in every way of calling tools.
func TestBundledServer(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			calc := map[string]any{"command": testenv.Bundled(t, "mcp-calculator"), "autoApprove": []string{"calculate"}}
			e := newEnv(t, m.handler(llmfake.Native(func(c llmfake.Call) llmfake.Reply {
				if res := c.Request.Last(); strings.HasPrefix(res, "[use_mcp_tool") {
					return llmfake.Text(complete("It is " + strings.TrimSpace(strings.Trim(strings.SplitN(res, "\n", 2)[1], "`\n")) + "."))
				}
				return llmfake.Text(useTool("calc", "calculate", `{"expression": "25 * 48 + 120 / 4"}`))
			})), setup{servers: map[string]any{"calc": calc}, config: func(c *wiring) { c.ToolCalling = m.calling }})
			if got := e.say("what is 25*48+120/4?").last(t); got.Kind != agent.EventAnswer || got.Text != "It is 1230." {
				t.Fatalf("last event = %+v", got)
			}
			if m.native() && len(e.model.Calls()[0].Request.Tools) == 0 {
				t.Error("no tools offered")
			}
		})
	}
}

// Models that write the <mcp:tool> dialect get their calls run too.
func TestDialect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text("<mcp:tool>\nname: add\nparameters:\n  a: 2\n  b: 3\n</mcp:tool>"),
		llmfake.Text(complete("5")),
	), setup{})
	if got := e.say("add").last(t); got.Kind != agent.EventAnswer || got.Text != "5" {
		t.Fatalf("last event = %+v", got)
	}
	if res := e.model.Calls()[1].Request.Last(); !strings.Contains(res, "The sum of 2 and 3 is 5.") {
		t.Errorf("model read %q", res)
	}
}

// A call written as an example, in a code fence beside prose, does not
// run: the model is asked what it meant, and its next reply decides. A
// fenced call that is the whole reply runs.
func TestFencedExampleDoesNotRun(t *testing.T) {
	t.Parallel()
	example := "This is what echoing would look like (I am not doing it):\n```xml\n" + echo("not meant") + "\n```"
	e := newEnv(t, llmfake.Script(
		llmfake.Text(example),
		llmfake.Text("It was only an example: the call is written as shown above."),
		llmfake.Text("```xml\n"+echo("meant")+"\n```"),
		llmfake.Text(complete("Echoed.")),
	), setup{})

	r := e.say("how would you echo something?")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "It was only an example: the call is written as shown above." {
		t.Fatalf("last event = %+v, want the second reply as the answer", got)
	}
	if s := r.kinds(agent.EventToolStart); len(s) != 0 {
		t.Errorf("a fenced example ran: %+v", s)
	}
	if a := e.audit(); len(a) != 0 {
		t.Errorf("audit = %+v, want nothing run", a)
	}
	if fb := e.model.Calls()[1].Request.Last(); !strings.Contains(fb, "Not run") || !strings.Contains(fb, "outside any code fence") {
		t.Errorf("the model was told %q, want the note on the fenced call", fb)
	}

	r = e.say("now echo for real")
	if s := r.kinds(agent.EventToolStart); len(s) != 1 || s[0].Tool != "echo" {
		t.Errorf("the lone fenced call did not run: %+v", s)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Echoed." {
		t.Errorf("last event = %+v", got)
	}
}

// Arguments nested 9,999 deep never reach the server (which would answer
// with an error the hub cannot match): the model hears of the bound at once.
func TestDeepArgumentsAreRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	deep := `{"message": "x", "extra": ` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "echo", deep)),
		llmfake.Text(complete("Gave up.")),
	), setup{})
	r := e.say("echo something deep")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Gave up." {
		t.Fatalf("last event = %+v", got)
	}
	if s := r.kinds(agent.EventToolStart); len(s) != 0 {
		t.Errorf("the call was sent: %+v", s)
	}
	if fb := e.model.Calls()[1].Request.Last(); !strings.Contains(fb, "deeper than 64 levels") {
		t.Errorf("the model was told %q", fb)
	}
}

// gated is an env whose hub runs "echo" as usual and "slow", the test
// server held at its gate until the test opens it, both launched without
// waiting, as the bot launches them; its log is kept.
type gated struct {
	*env
	open func()
	log  *testenv.Buffer
}

func newGated(t *testing.T, h llmfake.Handler, startWait time.Duration, extra map[string]any) *gated {
	t.Helper()
	slow, open := testenv.GatedEchoEntry(t, "echo")
	servers := map[string]any{"echo": echoServer(t), "slow": slow}
	for k, v := range extra {
		servers[k] = v
	}
	log := &testenv.Buffer{}
	e := newEnv(t, h, setup{launch: true, servers: servers, config: func(w *wiring) {
		w.StartWait = startWait
		w.Logger = slog.New(slog.NewTextHandler(log, nil))
	}})
	return &gated{env: e, open: open, log: log}
}

// sayAsync runs a turn on its own goroutine; the returned function waits
// for it.
func (g *gated) sayAsync(text string) func() *recorder {
	done := make(chan *recorder, 1)
	go func() {
		r := &recorder{}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_ = g.agent.Turn(ctx, agent.Request{Caller: alice, Text: text}, r.emit)
		done <- r
	}()
	return func() *recorder { return <-done }
}

func (g *gated) waitLog(line string) {
	g.t.Helper()
	testenv.Eventually(g.t, 30*time.Second, "the log line "+line, func() bool { return strings.Contains(g.log.String(), line) })
}

// A call to a server still starting waits for it and is checked against
// its tools: an auto-approved tool runs without a card. The turn itself
// does not wait here (StartWait 0), so the call finds the server
// starting; it opens only once the call is seen waiting.
func TestCallWaitsForAStartingServer(t *testing.T) {
	t.Parallel()
	g := newGated(t, llmfake.Script(
		llmfake.Text(useTool("slow", "echo", `{"message": "after the start"}`)),
		llmfake.Text(complete("done")),
	), 0, nil)
	if s, _ := g.hub.Catalog().Server("slow"); s.Status != mcpgram.StatusStarting {
		t.Fatalf("the server is %s before the turn, want starting", s.Status)
	}
	wait := g.sayAsync("echo it")
	g.waitLog("a call waits for its server to start")
	g.open()
	r := wait()
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
		t.Fatalf("last event = %+v, want the answer without a card", got)
	}
	if res := g.model.Calls()[1].Request.Last(); !strings.Contains(res, "after the start") {
		t.Errorf("the model read %q", res)
	}
}

// awayStore is a store whose database goes away: while down, its writes
// fail as an engine's do past its retries.
type awayStore struct {
	agent.Store
	down atomic.Bool
}

func (s *awayStore) AppendTurn(ctx context.Context, w store.TurnWrite) (int64, error) {
	if s.down.Load() {
		return 0, fmt.Errorf("append: %w: connection refused", store.ErrUnavailable)
	}
	return s.Store.AppendTurn(ctx, w)
}

// A store that cannot be reached ends the turn with an error wrapping
// store.ErrUnavailable and no terminal event: the user is not told it
// failed, for the front end runs the request again later; run again once
// the store is back, it is answered.
func TestStoreUnavailable(t *testing.T) {
	t.Parallel()
	away := &awayStore{}
	e := newEnv(t, llmfake.Script(llmfake.Text(complete("First.")), llmfake.Text(complete("Again."))),
		setup{config: func(w *wiring) { away.Store = w.Store; w.Store = away }})
	away.down.Store(true)
	r, err := e.turn(agent.Request{Caller: alice, Text: "hello"})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
	for _, ev := range r.All() {
		switch ev.Kind {
		case agent.EventAnswer, agent.EventQuestion, agent.EventApproval, agent.EventError:
			t.Errorf("the turn ended with %+v, want no terminal event", ev)
		}
	}
	away.down.Store(false)
	if got := e.say("hello").last(t); got.Kind != agent.EventAnswer || got.Text != "Again." {
		t.Errorf("run again: %+v, want the answer", got)
	}
	if h := e.history(); len(h) != 2 {
		t.Errorf("history %+v, want the message and its answer, once", h)
	}
}

// A message that arrives while a server is still starting waits for it
// before the model is called, so that the model's prompt lists its tools.
func TestTurnWaitsForServersStillStarting(t *testing.T) {
	t.Parallel()
	g := newGated(t, llmfake.Script(llmfake.Text(complete("done"))), time.Minute, nil)
	wait := g.sayAsync("hi")
	g.waitLog("waiting for servers to start")
	if n := len(g.model.Calls()); n != 0 {
		t.Fatalf("the model was called %d times while a server was starting", n)
	}
	g.open()
	r := wait()
	if got := r.last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	req := g.model.Calls()[0].Request
	if sys := req.Messages[0].Content; !strings.Contains(sys, "\n## slow\n") {
		t.Errorf("the system prompt lacks the server that was starting:\n%s", sys)
	}
	if strings.Contains(req.Messages[0].Content, "not available right now") {
		t.Errorf("the system prompt names a server unavailable: every server is up")
	}
}

// A server that does not start holds a turn back only up to StartWait:
// the model is called without its tools, and its system prompt names it,
// with a failed one, as set up but not available, the same bytes for
// every call of the turn.
func TestTurnWaitsNoLongerThanStartWait(t *testing.T) {
	t.Parallel()
	g := newGated(t, llmfake.Script(
		llmfake.Text(echo("hi")),
		llmfake.Text(complete("done")),
	), 300*time.Millisecond, map[string]any{"broken": map[string]any{"command": "./no-such-server"}})
	// echo is up before the turn, however loaded the machine: what is
	// tried here is that the turn does not wait for slow.
	testenv.Eventually(t, 30*time.Second, "echo running", func() bool {
		s, _ := g.hub.Catalog().Server("echo")
		return s.Status == mcpgram.StatusRunning
	})
	r := g.say("echo hi")
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
		t.Fatalf("last event = %+v", got)
	}
	// Its gate never opened and its timeout is a day: the turn did not
	// wait for it.
	if s, _ := g.hub.Catalog().Server("slow"); s.Status != mcpgram.StatusStarting {
		t.Fatalf("slow is %s, want still starting", s.Status)
	}
	calls := g.model.Calls()
	if len(calls) != 2 {
		t.Fatalf("model called %d times, want 2", len(calls))
	}
	sys := calls[0].Request.Messages[0].Content
	if strings.Contains(sys, "## slow") || !strings.Contains(sys, "## echo") {
		t.Errorf("system prompt: want echo's tools and not slow's:\n%s", sys)
	}
	if want := "These servers are set up but not available right now, so their tools are not listed: broken, slow."; !strings.Contains(sys, want) {
		t.Errorf("system prompt lacks %q:\n%s", want, sys)
	}
	if got := calls[1].Request.Messages[0].Content; got != sys {
		t.Error("the system prompt changed between the calls of the turn")
	}
	if last := calls[0].Request.Last(); last != "echo hi" {
		t.Errorf("the model read %q, want the message as the user wrote it", last)
	}
	if !strings.Contains(g.log.String(), "waited for servers to start") || !strings.Contains(g.log.String(), "slow (starting)") {
		t.Errorf("the log does not say the turn waited, and for what:\n%s", g.log.String())
	}
}
