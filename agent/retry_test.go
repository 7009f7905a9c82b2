package agent_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// /retry answers the last message again without the earlier answer in the
// model's view, and a call that answer made waits for approval, though
// the tool is auto-approved; a new call runs as usual.
func TestRetry(t *testing.T) {
	t.Parallel()
	n := 0
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		n++
		switch {
		case n == 1:
			return llmfake.Text(echo("once"))
		case n == 2:
			return llmfake.Text(complete("first answer"))
		case n == 3:
			return llmfake.Text(echo("once")) // the retry makes the same call
		}
		return llmfake.Text(complete("second answer"))
	}, setup{})

	if r, err := e.turn(agent.Request{Caller: alice, Retry: true}); err != nil || r.last(t).Kind != agent.EventError || !strings.Contains(r.last(t).Text, "no message to answer again") {
		t.Fatalf("retry with no history: %+v, %v", r.All(), err)
	}
	if got := e.say("say once").last(t); got.Kind != agent.EventAnswer || got.Text != "first answer" {
		t.Fatalf("first turn: %+v", got)
	}
	if len(e.audit()) != 1 {
		t.Fatalf("audit after the first turn: %+v", e.audit())
	}

	r, err := e.turn(agent.Request{Caller: alice, Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	got := r.last(t)
	if got.Kind != agent.EventApproval || got.Approval == nil || got.Approval.Tool != "echo" {
		t.Fatalf("the retry's repeated call: %+v, want an approval", got)
	}
	if len(e.audit()) != 1 {
		t.Errorf("the repeated call ran without approval: %+v", e.audit())
	}
	// The model saw the message once, without the first answer.
	retryCall := e.model.Calls()[2].Request
	var sawFirst, users int
	for _, m := range retryCall.Messages {
		if strings.Contains(m.Content, "first answer") {
			sawFirst++
		}
		if m.Role == "user" && m.Content == "say once" {
			users++
		}
	}
	if sawFirst != 0 || users != 1 {
		t.Errorf("the retry's model call saw the first answer %d times and the message %d times", sawFirst, users)
	}
	var texts []string
	for _, m := range e.history() {
		texts = append(texts, m.Content)
	}
	if strings.Contains(strings.Join(texts, "|"), "first answer") {
		t.Errorf("the history still holds the replaced answer: %q", texts)
	}

	r, err = e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: got.Approval.PendingID, Approve: true}})
	if err != nil || r.last(t).Text != "second answer" {
		t.Fatalf("after approving: %+v, %v", r.All(), err)
	}
	if len(e.audit()) != 2 {
		t.Errorf("audit after the approved repeat: %+v", e.audit())
	}
}
