package agent_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

const sum = `{"a": 2, "b": 3}`

// approvalEnv: echo runs freely, add needs approval.
func approvalEnv(t *testing.T, h llmfake.Handler) *env {
	t.Helper()
	return newEnv(t, h, setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo")}})
}

// ask runs the first turn up to the approval request.
func (e *env) askApproval(text string) *agent.Approval {
	e.t.Helper()
	r := e.say(text)
	got := r.last(e.t)
	if got.Kind != agent.EventApproval || got.Approval == nil {
		e.t.Fatalf("last event = %+v, want an approval request", got)
	}
	return got.Approval
}

func TestApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		decision agent.Decision
		want     string // in what the model reads next
		status   string // in the audit log
	}{
		{"approved", agent.Decision{Approve: true}, "The sum of 2 and 3 is 5.", "ok"},
		{"denied", agent.Decision{Approve: false}, "The user denied this operation.", "denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := approvalEnv(t, llmfake.Script(
				llmfake.Text("Adding.\n"+useTool("echo", "add", sum)),
				llmfake.Text(complete("Finished.")),
			))
			ap := e.askApproval("add 2 and 3")
			if ap.Server != "echo" || ap.Tool != "add" || ap.Arguments != `{"a":2,"b":3}` {
				t.Errorf("approval = %+v", ap)
			}
			if want := e.clock().Add(agent.DefaultApprovalTimeout); !ap.ExpiresAt.Equal(want) {
				t.Errorf("expires at %v, want %v", ap.ExpiresAt, want)
			}
			if n := len(e.audit()); n != 0 {
				t.Fatalf("%d tool calls before approval", n)
			}

			// Someone else in the chat cannot decide.
			bob := alice
			bob.UserID = "222"
			d := tt.decision
			d.PendingID = ap.PendingID
			if _, err := e.turn(agent.Request{Caller: bob, Decision: &d}); !errors.Is(err, agent.ErrNotYours) {
				t.Errorf("bob's press: err = %v, want ErrNotYours", err)
			}

			r, err := e.turn(agent.Request{Caller: alice, Decision: &d})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Finished." {
				t.Fatalf("last event = %+v", got)
			}
			if got := e.model.Calls()[1].Request.Last(); !strings.Contains(got, tt.want) {
				t.Errorf("model read %q, want %q in it", got, tt.want)
			}
			if a := e.audit(); len(a) != 1 || a[0].Status != tt.status || a[0].Tool != "add" {
				t.Errorf("audit = %+v, want one %s", a, tt.status)
			}
			// A double press finds the approval resolved.
			r, err = e.turn(agent.Request{Caller: alice, Decision: &d})
			if !errors.Is(err, agent.ErrStale) {
				t.Errorf("second press: err = %v, want ErrStale", err)
			}
			if len(r.All()) != 0 {
				t.Errorf("a stale press emitted %v", kindsOf(r.All()))
			}
		})
	}
}

func TestApprovalAlways(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text(useTool("echo", "add", `{"a": 10, "b": 5}`)),
		llmfake.Text(complete("15")),
	), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo")}})
	ap := e.askApproval("add")
	r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true, Always: true}})
	if err != nil {
		t.Fatal(err)
	}
	// The second add ran without asking.
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "15" {
		t.Fatalf("last event = %+v", got)
	}
	if n := len(r.kinds(agent.EventToolEnd)); n != 2 {
		t.Errorf("%d tool calls ran, want 2", n)
	}
	b, err := os.ReadFile(e.settings)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"add"`) {
		t.Errorf("settings file does not allow add:\n%s", b)
	}
}

func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	e := approvalEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text(complete("Not added.")),
	))
	ap := e.askApproval("add")

	// Not yet expired: nothing happens.
	if err := e.agent.Expire(context.Background(), e.advance(9*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	now := e.advance(2 * time.Minute)
	// Past its time, it is no longer shown as open.
	if _, ok, err := e.agent.Open(context.Background(), alice.ChatID); ok || err != nil {
		t.Errorf("Open of an expired approval = %v, %v; want nothing open", ok, err)
	}
	// Too late to press, even before the sweep.
	if _, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true}}); !errors.Is(err, agent.ErrStale) {
		t.Errorf("late press: err = %v, want ErrStale", err)
	}
	r := &recorder{}
	var chats []string
	err := e.agent.Expire(context.Background(), now, func(chatID string) func(agent.Event) {
		chats = append(chats, chatID)
		return r.emit
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 1 || chats[0] != alice.ChatID {
		t.Errorf("events went to chats %v", chats)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Not added." {
		t.Fatalf("last event = %+v", got)
	}
	if got := e.model.Calls()[1].Request.Last(); !strings.Contains(got, "The user denied this operation.") {
		t.Errorf("model read %q", got)
	}
	if a := e.audit(); len(a) != 1 || a[0].Status != "expired" {
		t.Errorf("audit = %+v", a)
	}
	// A second sweep finds nothing.
	if err := e.agent.Expire(context.Background(), e.advance(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(e.model.Calls()); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
}

// A reply mixing free and guarded calls runs the free ones at once, asks
// for the guarded one, and sends all results in order after the decision.
func TestApprovalInABatch(t *testing.T) {
	t.Parallel()
	e := approvalEnv(t, llmfake.Script(
		llmfake.Text(echo("first")+"\n"+useTool("echo", "add", sum)+"\n"+echo("third")),
		llmfake.Text(complete("ok")),
	))
	r := e.say("three calls")
	if n := len(r.kinds(agent.EventToolEnd)); n != 2 {
		t.Errorf("%d calls ran before the approval, want the 2 free ones", n)
	}
	ap := r.last(t).Approval
	if _, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true}}); err != nil {
		t.Fatal(err)
	}
	res := e.model.Calls()[1].Request.Last()
	i1, i2, i3 := strings.Index(res, echoed("first")), strings.Index(res, "The sum of 2 and 3 is 5."), strings.Index(res, echoed("third"))
	if i1 < 0 || i2 < i1 || i3 < i2 {
		t.Errorf("results out of order:\n%s", res)
	}
}

// Typing instead of pressing denies the waiting call and moves on.
func TestApprovalIgnored(t *testing.T) {
	t.Parallel()
	e := approvalEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text("Sure, forget it."),
	))
	ap := e.askApproval("add")
	if got := e.say("never mind").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	got := e.model.Calls()[1].Request.Last()
	if !strings.Contains(got, "The user denied this operation.") || !strings.HasSuffix(got, "never mind") {
		t.Errorf("model read %q", got)
	}
	if _, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true}}); !errors.Is(err, agent.ErrStale) {
		t.Errorf("press after moving on: err = %v, want ErrStale", err)
	}
}

// In a group, another member's message neither denies nor answers the
// approval that belongs to the member whose turn it is.
func TestApprovalInAGroupWaitsForItsUser(t *testing.T) {
	t.Parallel()
	e := approvalEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text("The sum is 5."),
	))
	ap := e.askApproval("add")
	bob := mcpgram.Caller{UserID: "222", ChatID: alice.ChatID}
	r, err := e.turn(agent.Request{Caller: bob, Text: "hello bot"})
	if err != nil {
		t.Fatalf("bob's message: %v", err)
	}
	if got := r.last(t); got.Kind != agent.EventError || !strings.Contains(got.Text, "waiting for approval") {
		t.Errorf("bob got %+v, want to be told to wait", got)
	}
	if n := len(e.model.Calls()); n != 1 {
		t.Errorf("bob's message reached the model: %d calls", n)
	}
	r, err = e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true}})
	if err != nil {
		t.Fatalf("alice's approval after bob's message: %v", err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "The sum is 5." {
		t.Errorf("last event = %+v", got)
	}
	for _, m := range e.history() {
		if strings.Contains(m.Content, "hello bot") || strings.Contains(m.Content, "denied") {
			t.Errorf("history holds %q", m.Content)
		}
	}
}

func TestAutoApproveAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmfake.Script(
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text(complete("5")),
	), setup{
		servers: map[string]any{"echo": testenv.EchoEntry(t)},
		config:  func(c *wiring) { c.AutoApproveAll = true },
	})
	if got := e.say("add").last(t); got.Kind != agent.EventAnswer || got.Text != "5" {
		t.Fatalf("last event = %+v", got)
	}
}

// Nothing waits in memory: a question and an approval asked before a
// restart are answered after it.
func TestRestartLosesNothing(t *testing.T) {
	t.Parallel()
	e := approvalEnv(t, llmfake.Script(
		llmfake.Text("<ask_followup_question><question>Add what?</question><options>[\"2 and 3\", \"4 and 5\"]</options></ask_followup_question>"),
		llmfake.Text(useTool("echo", "add", sum)),
		llmfake.Text(complete("5")),
	))
	q := e.say("add").last(t)
	e.restart()
	// A front end that starts afresh finds what is open, as it was asked.
	if ev, ok, err := e.agent.Open(context.Background(), alice.ChatID); err != nil || !ok || ev.Kind != agent.EventQuestion ||
		ev.Question.PendingID != q.Question.PendingID || ev.Question.Text != "Add what?" || len(ev.Question.Options) != 2 {
		t.Fatalf("Open after a restart = %+v, %v, %v; want the question", ev, ok, err)
	}
	r, err := e.turn(agent.Request{Caller: alice, Answer: &agent.Answer{PendingID: q.Question.PendingID, Option: 0}})
	if err != nil {
		t.Fatal(err)
	}
	ap := r.last(t).Approval
	if ap == nil {
		t.Fatalf("last event = %+v, want an approval", r.last(t))
	}
	e.restart()
	if ev, ok, err := e.agent.Open(context.Background(), alice.ChatID); err != nil || !ok || ev.Kind != agent.EventApproval || *ev.Approval != *ap {
		t.Fatalf("Open after a restart = %+v, %v, %v; want the approval %+v", ev.Approval, ok, err, ap)
	}
	r, err = e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.agent.Open(context.Background(), alice.ChatID); ok || err != nil {
		t.Errorf("Open after the answer = %v, %v; want nothing open", ok, err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "5" {
		t.Fatalf("last event = %+v", got)
	}
	msgs := e.model.Calls()[2].Request.Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,user,assistant,user" {
		t.Errorf("roles sent after two restarts: %s", got)
	}
	if !strings.Contains(msgs[3].Content, "<answer>2 and 3</answer>") || !strings.Contains(msgs[5].Content, "The sum of 2 and 3 is 5.") {
		t.Errorf("messages after restarts: %+v", msgs)
	}
}

// A resource read that no "resource:" entry of autoApprove covers waits
// for the user like a tool, across a restart; "always" adds the exact URI.
func TestResourceReadNeedsApproval(t *testing.T) {
	t.Parallel()
	const uri = "echo://static/readme.md"
	read := "<access_mcp_resource>\n<server_name>echo</server_name>\n<uri>" + uri + "</uri>\n</access_mcp_resource>"
	e := newEnv(t, llmfake.Script(
		llmfake.Text(read),
		llmfake.Text(complete("Read.")),
		llmfake.Text(read),
		llmfake.Text(complete("Read again.")),
	), setup{servers: map[string]any{"echo": testenv.EchoEntry(t, "echo")}})

	ap := e.askApproval("read the doc")
	if ap.Server != "echo" || ap.URI != uri || ap.Tool != "" || ap.Consent {
		t.Errorf("approval = %+v, want the read of %s on echo", ap, uri)
	}
	if n := len(e.audit()); n != 0 {
		t.Fatalf("%d reads before approval", n)
	}
	e.restart()
	r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true, Always: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Read." {
		t.Fatalf("last event = %+v", got)
	}
	if res := e.model.Calls()[1].Request.Last(); !strings.Contains(res, "[access_mcp_resource for '"+uri+"' on 'echo'] Result:\n```\n# echo") {
		t.Errorf("model read %q", res)
	}
	b, err := os.ReadFile(e.settings)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"resource:`+uri+`"`) {
		t.Errorf("settings file does not allow the URI:\n%s", b)
	}
	// The next read of the same URI runs without asking.
	if got := e.say("read it again").last(t); got.Kind != agent.EventAnswer || got.Text != "Read again." {
		t.Fatalf("last event = %+v", got)
	}
}

// A call its tool declares to need the user's own consent is asked for on
// a card even when the tool is auto-approved, and even with AUTO_APPROVE
// =all; only the user's press sends it with the consent mark, and no
// "always" covers it.
func TestConsentCalls(t *testing.T) {
	t.Parallel()
	echoBin := testenv.TestServer(t, "echo")
	for _, approveAll := range []bool{false, true} {
		t.Run(map[bool]string{false: "autoApprove", true: "AUTO_APPROVE=all"}[approveAll], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmfake.Script(
				llmfake.Text(useTool("notes", "keep", `{"mode": "read"}`)),
				llmfake.Text(useTool("notes", "keep", `{"mode": "write"}`)),
				llmfake.Text(complete("Kept.")),
			), setup{
				servers: map[string]any{"notes": map[string]any{"command": echoBin, "autoApprove": []string{"keep"}}},
				config:  func(c *wiring) { c.AutoApproveAll = approveAll },
			})
			before, err := os.ReadFile(e.settings)
			if err != nil {
				t.Fatal(err)
			}
			ap := e.askApproval("keep a note")
			if !ap.Consent || ap.Tool != "keep" || ap.Arguments != `{"mode":"write"}` {
				t.Fatalf("approval = %+v, want the write, marked as consent", ap)
			}
			calls := e.model.Calls()
			if read := calls[1].Request.Last(); !strings.Contains(read, "Result:") || strings.Contains(read, "mcpgram/consent") {
				t.Errorf("the read ran as %q; want it run without asking, with no consent mark", read)
			}
			// A forged "always" approves this call only.
			r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: ap.PendingID, Approve: true, Always: true}})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "Kept." {
				t.Fatalf("last event = %+v", got)
			}
			if write := e.model.Calls()[2].Request.Last(); !strings.Contains(write, `"mcpgram/consent":true`) || !strings.Contains(write, `"mcpgram/user_id":"111"`) {
				t.Errorf("the approved write reached the server as %q; want the consent mark", write)
			}
			after, err := os.ReadFile(e.settings)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("an always press on a consent call changed the settings:\n%s", after)
			}
		})
	}
}
