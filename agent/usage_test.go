package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// sample returns the value of the metric name with exactly labels (a
// counter's value, a histogram's sample count), failing when there is no
// such series.
func sample(t *testing.T, m *metrics.Metrics, name string, labels ...string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) != len(want) {
				continue
			}
			for _, l := range s.GetLabel() {
				if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
					continue series
				}
			}
			if h := s.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return s.GetCounter().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// A turn with valid, repaired and invalid tool calls counts the turn, both
// model calls with their first tokens, the provider's tokens, the format
// of each call and the calls themselves, with bounded labels.
func TestMetricsOfATurnWithAToolCall(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(echo("hi")+"\n"+useTool("echo", "echo", `{"message": "slip",}`)+"\n"+useTool("echo", "no_such_tool", `{}`)+"\n"+useTool("made_up", "x", `{}`)).Split(9),
		llmfake.Text(complete("done")),
	), setup{config: func(c *wiring) { c.Metrics = m }})
	if got := e.say("echo hi").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("turn ended with %+v", got)
	}

	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpgram_turns_total", []string{"outcome", "answer"}, 1},
		{"mcpgram_model_calls_total", []string{"model", "fake", "outcome", "ok"}, 2},
		{"mcpgram_model_call_seconds", []string{"model", "fake"}, 2},
		{"mcpgram_model_first_token_seconds", []string{"model", "fake"}, 2},
		{"mcpgram_tool_call_seconds", []string{"server", "echo", "tool", "echo"}, 2},
	}
	for _, c := range checks {
		if got := sample(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The complete series: nothing unexpected, no made-up name as a label.
	want := `
# HELP mcpgram_tool_calls_total MCP tool calls by server, tool and status (ok, tool_error, timeout, denied, invalid, failed).
# TYPE mcpgram_tool_calls_total counter
mcpgram_tool_calls_total{server="",status="invalid",tool=""} 1
mcpgram_tool_calls_total{server="echo",status="invalid",tool=""} 1
mcpgram_tool_calls_total{server="echo",status="ok",tool="echo"} 2
# HELP mcpgram_tool_format_total Tool calls in the model's replies, by model and result (first_try, repaired, fed_back) and kind of problem or repair.
# TYPE mcpgram_tool_format_total counter
mcpgram_tool_format_total{kind="",model="fake",result="first_try"} 2
mcpgram_tool_format_total{kind="json_trailing_comma",model="fake",result="repaired"} 1
mcpgram_tool_format_total{kind="unknown_server",model="fake",result="fed_back"} 1
mcpgram_tool_format_total{kind="unknown_tool",model="fake",result="fed_back"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "mcpgram_tool_calls_total", "mcpgram_tool_format_total"); err != nil {
		t.Error(err)
	}

	// The tokens counted are the provider's, and the ones stored.
	u, err := e.db.UserUsage(context.Background(), alice.UserID, e.clock())
	if err != nil {
		t.Fatal(err)
	}
	if u.Today.Calls != 2 || u.Today.In == 0 || u.Today.Out == 0 || u.Today.Estimated() {
		t.Errorf("stored usage = %+v, want two calls with the provider's counts", u.Today)
	}
	in := sample(t, m, "mcpgram_tokens_total", "model", "fake", "direction", "in", "source", "provider")
	out := sample(t, m, "mcpgram_tokens_total", "model", "fake", "direction", "out", "source", "provider")
	if int64(in) != u.Today.In || int64(out) != u.Today.Out {
		t.Errorf("tokens counted %v in, %v out; stored %d in, %d out", in, out, u.Today.In, u.Today.Out)
	}
}

// mixedReplies read a resource beside a failing call, ask a malformed
// question, call a tool that needs approval, and then fail with a 400.
func mixedReplies() []llmfake.Reply {
	read := "<access_mcp_resource>\n<server_name>echo</server_name>\n<uri>echo://dynamic/1</uri>\n</access_mcp_resource>"
	return []llmfake.Reply{
		llmfake.Text(read + "\n" + useTool("echo", "fail", `{}`)),
		llmfake.Text("<ask_followup_question>\n<question>Which?</question>\n<options>not json</options>\n</ask_followup_question>"),
		llmfake.Text(useTool("echo", "pid", `{}`)),
		{Status: 400, Error: "no more"},
	}
}

// Resource reads, denied calls and a refused question each count where
// they belong.
func TestMetricsOfReadsDenialsAndCorrections(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, llmfake.Script(mixedReplies()...), setup{
		servers: map[string]any{"echo": testenv.EchoEntry(t, "echo", "resource:echo://dynamic/*", "fail")},
		config:  func(c *wiring) { c.Metrics = m },
	})
	r := e.say("read, then ask")
	last := r.last(t)
	if last.Kind != agent.EventApproval {
		t.Fatalf("turn ended with %+v, want an approval request", last)
	}
	if _, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: last.Approval.PendingID}}); err == nil {
		t.Fatal("the model refused the call after the denial, yet the turn succeeded")
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpgram_resource_reads_total", []string{"server", "echo", "status", "ok"}, 1},
		{"mcpgram_tool_format_total", []string{"model", "fake", "result", "fed_back", "kind", "invalid_options"}, 1},
		{"mcpgram_tool_calls_total", []string{"server", "echo", "tool", "fail", "status", "tool_error"}, 1},
		{"mcpgram_tool_calls_total", []string{"server", "echo", "tool", "pid", "status", "denied"}, 1},
		{"mcpgram_turns_total", []string{"outcome", "approval"}, 1},
		{"mcpgram_turns_total", []string{"outcome", "error"}, 1},
		{"mcpgram_model_calls_total", []string{"model", "fake", "outcome", "bad_request"}, 1},
	} {
		if got := sample(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// A provider that reports no usage gets the estimate, stored and counted
// as such.
func TestUsageEstimatedWhenNotReported(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, llmfake.Script(
		llmfake.Reply{Content: complete("hello to you"), NoUsage: true},
	), setup{config: func(c *wiring) { c.Metrics = m }})
	e.say("hello")
	u, err := e.db.UserUsage(context.Background(), alice.UserID, e.clock())
	if err != nil {
		t.Fatal(err)
	}
	if u.Today.Calls != 1 || u.Today.In == 0 || u.Today.Out == 0 || u.Today.EstimatedIn != u.Today.In || u.Today.EstimatedOut != u.Today.Out {
		t.Errorf("stored usage = %+v, want one call, all estimated", u.Today)
	}
	if got := sample(t, m, "mcpgram_tokens_total", "model", "fake", "direction", "out", "source", "estimate"); int64(got) != u.Today.Out {
		t.Errorf("estimated tokens out counted = %v, want %d", got, u.Today.Out)
	}
}

// Over the day's budget, a user's turn does not start and they hear when
// it resets; an exempt request (an admin's) runs; the count survives a
// restart, and the next UTC day starts afresh.
func TestBudget(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	ask := "<ask_followup_question>\n<question>Which?</question>\n<options>[\"a\", \"b\"]</options>\n</ask_followup_question>"
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		if last := c.Request.Last(); strings.Contains(last, "please ask") || strings.Contains(last, "<answer>b</answer>") {
			return llmfake.Text(ask) // asks again after a pressed answer
		}
		return llmfake.Text(complete("ok"))
	},
		setup{config: func(c *wiring) { c.TokenBudgetPerUserDay = 10; c.Metrics = m }})
	e.advance(-(2*time.Hour + 30*time.Minute + 20*time.Second)) // 09:29:40 UTC
	if got := e.say("first").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("first turn, under budget: %+v", got)
	}
	e.restart()
	calls := len(e.model.Calls())

	r, err := e.turn(agent.Request{Caller: alice, Text: "second"})
	if !errors.Is(err, agent.ErrOverBudget) {
		t.Errorf("over budget: err = %v, want ErrOverBudget", err)
	}
	got := r.last(t)
	if got.Kind != agent.EventError || !strings.Contains(got.Text, "token budget") || !strings.Contains(got.Text, "resets at 00:00 UTC, in 14 h 31 min.") {
		t.Errorf("over budget: %+v, want the budget message with the time to reset", got)
	}
	if n := len(e.model.Calls()); n != calls {
		t.Errorf("the model was called %d times over budget", n-calls)
	}
	if got := sample(t, m, "mcpgram_turns_total", "outcome", "budget"); got != 1 {
		t.Errorf("turns counted over budget = %v, want 1", got)
	}

	if got := mustTurn(t, e, agent.Request{Caller: alice, Text: "as admin", Exempt: true}); got.Kind != agent.EventAnswer {
		t.Errorf("exempt request: %+v, want the answer", got)
	}
	bob := mcpgram.Caller{UserID: "222", ChatID: alice.ChatID}
	if got := mustTurn(t, e, agent.Request{Caller: bob, Text: "another user"}); got.Kind != agent.EventAnswer {
		t.Errorf("another user: %+v, want the answer", got)
	}

	// Over the budget, the request that crossed it may finish: its
	// question is answered (pressed here, or typed); the question that
	// answer asks is new work, refused, typed or pressed.
	q := mustTurn(t, e, agent.Request{Caller: alice, Text: "please ask", Exempt: true})
	if q.Kind != agent.EventQuestion {
		t.Fatalf("exempt question turn: %+v", q)
	}
	again := mustTurn(t, e, agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: q.Question.PendingID, Option: 1}})
	if again.Kind != agent.EventQuestion {
		t.Fatalf("pressed answer over budget: %+v, want the turn to go on", again)
	}
	calls = len(e.model.Calls())
	for _, req := range []agent.Request{
		{Caller: alice, Text: "typed answer"},
		{Caller: alice, Answer: &agent.Answer{PendingID: again.Question.PendingID, Option: 1}},
	} {
		r, err := e.turn(req)
		if got := r.last(t); !errors.Is(err, agent.ErrOverBudget) || !strings.Contains(got.Text, "token budget") {
			t.Errorf("answer to the question of a turn over budget: %+v (%v), want the budget message", got, err)
		}
	}
	if n := len(e.model.Calls()); n != calls {
		t.Errorf("the model was called %d times for answers over budget", n-calls)
	}

	e.advance(14*time.Hour + 31*time.Minute) // 00:00:40 UTC, the next day
	if got := e.say("next day").last(t); got.Kind != agent.EventAnswer {
		t.Errorf("next day: %+v, want the answer", got)
	}
	u, err := agent.NewMeter(e.agent).Usage(context.Background(), alice.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Budget != 10 || u.Today.Calls != 1 || u.Month.Calls != 5 || !u.Resets.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Usage = %+v, want budget 10, 1 call today, 5 this month, reset at the 23rd", u)
	}
}

func mustTurn(t *testing.T, e *env, req agent.Request) agent.Event {
	t.Helper()
	r, err := e.turn(req)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	return r.last(t)
}

// Every line the agent and its executor log for a turn carries its id and
// chat; a turn id from the request is used as is.
func TestTurnLogLines(t *testing.T) {
	t.Parallel()
	var buf testenv.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, llmfake.Script(
		llmfake.Text(echo("hi")),
		llmfake.Text(complete("done")),
	), setup{config: func(c *wiring) { c.Logger = logger }})
	if got := mustTurn(t, e, agent.Request{Caller: alice, Text: "echo hi", TurnID: "t-42"}); got.Kind != agent.EventAnswer {
		t.Fatalf("turn ended with %+v", got)
	}
	seen := map[string]int{}
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["turn"] != "t-42" || rec["chat"] != alice.ChatID {
			t.Errorf("log line without the turn's id and chat: %s", line)
		}
		seen[rec["msg"].(string)]++
	}
	if seen["model call"] != 2 || seen["tool call"] != 1 || seen["call done"] != 1 {
		t.Errorf("log lines = %v, want 2 model calls, 1 tool call and the executor's call done", seen)
	}
}

// What a turn records for /stats matches what it counts in the metrics:
// the turn's outcome (an error with its kind), each model call with its
// failure and tool-call format, the tools from the audit log, and the
// user's tokens.
func TestStatsRecorded(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, llmfake.Script(append(mixedReplies(),
		llmfake.Text(useTool("echo", "nope", `{}`)),
		llmfake.Text(useTool("echo", "nope", `{}`)),
		llmfake.Text(useTool("echo", "nope", `{}`)),
	)...), setup{
		servers: map[string]any{"echo": testenv.EchoEntry(t, "echo", "resource:echo://dynamic/*", "fail")},
		config:  func(c *wiring) { c.Metrics = m },
	})
	last := e.say("read, then ask").last(t)
	if last.Kind != agent.EventApproval {
		t.Fatalf("turn ended with %+v, want an approval request", last)
	}
	if _, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: last.Approval.PendingID}}); err == nil {
		t.Fatal("the model refused the call after the denial, yet the turn succeeded")
	}
	if got := e.say("again").last(t); got.Kind != agent.EventError {
		t.Fatalf("third turn ended with %+v, want an error after three invalid replies", got)
	}

	ctx := context.Background()
	st, err := e.db.Stats(ctx, e.clock().Add(-time.Minute), e.clock().Add(time.Minute), 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.Count{{Name: "error", N: 2}, {Name: "approval", N: 1}}; !reflect.DeepEqual(st.Turns, want) {
		t.Errorf("turns = %+v, want %+v", st.Turns, want)
	}
	if want := []store.Count{{Name: "bad_request", N: 1}, {Name: "format", N: 1}}; !reflect.DeepEqual(st.Errors, want) {
		t.Errorf("errors = %+v, want %+v", st.Errors, want)
	}
	if len(st.Models) != 1 {
		t.Fatalf("models = %+v, want one", st.Models)
	}
	// Blocks: the read and fail at the first try; the question fed back;
	// pid at the first try; three unknown tools fed back.
	mo := st.Models[0]
	if mo.Model != "fake" || mo.Calls != 7 || mo.FirstTry != 3 || mo.Blocks != 7 ||
		!reflect.DeepEqual(mo.Failures, []store.Count{{Name: "bad_request", N: 1}}) {
		t.Errorf("model = %+v, want fake: 7 calls, 1 bad_request, 3 of 7 blocks at the first try", mo)
	}
	firstTry := sample(t, m, "mcpgram_tool_format_total", "model", "fake", "result", "first_try", "kind", "")
	if int64(firstTry) != mo.FirstTry {
		t.Errorf("first_try counted %v, recorded %d", firstTry, mo.FirstTry)
	}
	u, err := e.db.UserUsage(ctx, alice.UserID, e.clock())
	if err != nil {
		t.Fatal(err)
	}
	if mo.In != u.Today.In || mo.Out != u.Today.Out {
		t.Errorf("model tokens %d in, %d out; usage %+v", mo.In, mo.Out, u.Today)
	}
	if len(st.TopUsers) != 1 || st.TopUsers[0].UserID != alice.UserID || st.TopUsers[0].Total() != u.Today.Total() {
		t.Errorf("top users = %+v, want %s with %d tokens", st.TopUsers, alice.UserID, u.Today.Total())
	}
	wantTools := map[string][3]int64{ // calls, failed, denied
		"echo/access_mcp_resource": {1, 0, 0}, "echo/fail": {1, 1, 0}, "echo/pid": {0, 0, 1},
	}
	if len(st.Tools) != len(wantTools) {
		t.Errorf("tools = %+v, want %d", st.Tools, len(wantTools))
	}
	for _, tool := range st.Tools {
		if got := [3]int64{tool.Calls, tool.Failed, tool.Denied}; got != wantTools[tool.Server+"/"+tool.Tool] {
			t.Errorf("tool %s/%s: calls, failed, denied = %v, want %v", tool.Server, tool.Tool, got, wantTools[tool.Server+"/"+tool.Tool])
		}
	}
}

// A model that streams without end is cut at its reply's bound: the turn
// ends with a sentence saying so, and what the endpoint streamed until
// then counts against the user's tokens, so that a runaway endpoint does
// not spend the day's budget unseen.
func TestRunawayReplyEndsTheTurn(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply {
		return llmfake.Reply{Chunks: []string{"and on "}, Endless: true}
	}, setup{config: func(w *wiring) { w.MaxTokens = 64; w.Metrics = m }})
	got := e.say("tell me everything").last(t)
	if got.Kind != agent.EventError || !strings.Contains(got.Text, "too long") {
		t.Fatalf("the turn ended with %+v, want the sentence that the reply was too long", got)
	}
	u, err := e.db.DayUsage(context.Background(), alice.UserID, e.clock())
	if err != nil {
		t.Fatal(err)
	}
	if bound := int64(64 * llm.BytesPerToken); u.Out < bound/4 || u.In == 0 {
		t.Errorf("tokens counted %+v, want at least %d out (the %d bytes streamed) and the prompt in", u, bound/4, bound)
	}
	if got := sample(t, m, "mcpgram_model_calls_total", "model", "fake", "outcome", "too_long"); got != 1 {
		t.Errorf("model calls counted too long = %v, want 1", got)
	}
}

// An approval asked by a turn over the budget is new work too: pressed,
// it is refused; left to expire, it is denied without calling the model,
// which would otherwise carry on, and ask again, every ten minutes.
func TestBudgetApprovalOverBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text(useTool("echo", "add", sum)) },
		setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo")}, config: func(c *wiring) { c.TokenBudgetPerUserDay = 10 }})
	first := e.askApproval("please add") // under the budget, and crosses it
	r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: first.PendingID, Approve: true}})
	got := r.last(t)
	if err != nil || got.Kind != agent.EventApproval {
		t.Fatalf("the approval of the turn that crossed the budget: %+v (%v), want the turn to go on", got, err)
	}
	r, err = e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: got.Approval.PendingID, Approve: true}})
	if got := r.last(t); !errors.Is(err, agent.ErrOverBudget) || !strings.Contains(got.Text, "token budget") {
		t.Errorf("the approval of a turn over the budget, pressed: %+v (%v), want the budget message", got, err)
	}
	calls := len(e.model.Calls())
	r = &recorder{}
	if err := e.agent.Expire(context.Background(), e.advance(time.Hour), func(string) func(agent.Event) { return r.emit }); err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Kind != agent.EventError || !strings.Contains(got.Text, "token budget") {
		t.Errorf("the approval of a turn over the budget, expired: %+v, want the budget message", got)
	}
	if n := len(e.model.Calls()); n != calls {
		t.Errorf("the model was called %d times after the expiry", n-calls)
	}
	if h := e.history(); !strings.Contains(h[len(h)-1].Content, "denied") {
		t.Errorf("the history ends with %q, want the denial the model reads next time", h[len(h)-1].Content)
	}
}
