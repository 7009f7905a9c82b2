package agent_test

import (
	"context"
	"testing"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// A request run again under its turn's id (its update, which the bot
// stopped before marking done) is the same turn: wherever the bot
// stopped, nothing the turn did is done again. No call runs a second
// time, an answer given is sent again as it was without asking the
// model, and a question asked is shown again; the request is stored
// once.
func TestRequestRunAgainIsTheSameTurn(t *testing.T) {
	t.Parallel()
	const id = "00000000000004d2"
	call := echo("send the invoice")
	for _, tc := range []struct {
		name string
		// stored is what the turn stored before the bot stopped, after
		// its request; nil runs the whole turn first.
		stored []store.Message
		// model answers the run again; nil: it must not be called.
		model []llmfake.Reply
		// want is the run again's last event, asked how many times the
		// model reads the request (0: once), and history how many
		// messages the conversation holds after it.
		want    agent.Event
		asked   int
		history int
	}{{
		name:    "after the answer",
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent."},
		history: 4,
	}, {
		name:    "after the call's result",
		stored:  []store.Message{{Role: agent.RoleAssistant, Content: call}, {Role: agent.RoleTool, Content: echoed("send the invoice")}},
		model:   []llmfake.Reply{llmfake.Text(complete("Sent."))},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent."},
		history: 4,
	}, {
		name:    "during the call",
		stored:  []store.Message{{Role: agent.RoleAssistant, Content: call}},
		model:   []llmfake.Reply{llmfake.Text(complete("It may have gone out; check before sending again."))},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "It may have gone out; check before sending again."},
		history: 4,
	}, {
		name:    "before the model answered",
		stored:  []store.Message{},
		model:   []llmfake.Reply{llmfake.Text(complete("Sent."))},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent."},
		history: 2,
	}, {
		name:    "after the answer was stored",
		stored:  []store.Message{{Role: agent.RoleAssistant, Content: complete("Sent.")}},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent."},
		history: 2,
	}, {
		// A shutdown cut the turn short, to run again: the model reads
		// the request again, after what the cut turn did.
		name:    "after a shutdown cut it short",
		stored:  []store.Message{{Role: agent.RoleAssistant, Content: call}, {Role: agent.RoleTool, Content: echoed("send the invoice")}, {Role: agent.RoleAssistant, Content: agent.NoteCancelled}},
		model:   []llmfake.Reply{llmfake.Text(complete("Sent already."))},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent already."},
		asked:   2,
		history: 6,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := tc.model
			if tc.stored == nil {
				script = append([]llmfake.Reply{llmfake.Text(call), llmfake.Text(complete("Sent."))}, script...)
			}
			e := newEnv(t, llmfake.Script(script...), setup{})
			req := agent.Request{Caller: alice, Text: "send the invoice", TurnID: id}
			if tc.stored == nil {
				if r, err := e.turn(req); err != nil || r.last(t).Text != "Sent." {
					t.Fatalf("first run: %+v, %v", r.last(t), err)
				}
			} else {
				msgs := append([]store.Message{{Role: agent.RoleUser, Content: req.Text, TurnID: id}}, tc.stored...)
				if _, err := e.db.AppendTurn(context.Background(), store.TurnWrite{ChatID: alice.ChatID, Messages: msgs}); err != nil {
					t.Fatal(err)
				}
			}
			calls := len(e.model.Calls())
			e.restart()
			r, err := e.turn(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != tc.want.Kind || got.Text != tc.want.Text {
				t.Errorf("run again ended with %v %q, want %v %q", got.Kind, got.Text, tc.want.Kind, tc.want.Text)
			}
			if s := r.kinds(agent.EventToolStart); len(s) != 0 {
				t.Errorf("a call ran again: %+v", s)
			}
			if got, want := len(e.model.Calls())-calls, len(tc.model); got != want {
				t.Errorf("the model was called %d times, want %d", got, want)
			}
			for _, c := range e.model.Calls()[calls:] {
				n := 0
				for _, m := range c.Request.Messages {
					n += btoi(m.Content == req.Text)
				}
				if want := max(tc.asked, 1); n != want {
					t.Errorf("the model read the request %d times, want %d", n, want)
				}
			}
			if h := e.history(); len(h) != tc.history {
				t.Errorf("history has %d messages, want %d: %+v", len(h), tc.history, h)
			}
		})
	}
}

// A question or approval the turn opened is shown again, the same one:
// the run again opens none of its own, and asks the model nothing.
func TestRequestRunAgainShowsItsCard(t *testing.T) {
	t.Parallel()
	ask := `<ask_followup_question><question>Which invoice?</question><options>["March","April"]</options></ask_followup_question>`
	for _, tc := range []struct {
		name  string
		reply string
		env   func(*testing.T, llmfake.Handler) *env
		kind  agent.EventKind
	}{
		{"question", ask, func(t *testing.T, h llmfake.Handler) *env { return newEnv(t, h, setup{}) }, agent.EventQuestion},
		{"approval", "Adding.\n" + useTool("echo", "add", sum), approvalEnv, agent.EventApproval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := tc.env(t, llmfake.Script(llmfake.Text(tc.reply)))
			req := agent.Request{Caller: alice, Text: "send the invoice", TurnID: "00000000000004d2"}
			r, err := e.turn(req)
			if err != nil {
				t.Fatal(err)
			}
			asked := r.last(t)
			if asked.Kind != tc.kind {
				t.Fatalf("first run ended with %+v", asked)
			}
			e.restart()
			if r, err = e.turn(req); err != nil {
				t.Fatal(err)
			}
			if got := r.last(t); got.Kind != tc.kind || pendingID(got) != pendingID(asked) {
				t.Errorf("run again ended with %+v, want %v %d shown again", got, tc.kind, pendingID(asked))
			}
			if n := len(e.model.Calls()); n != 1 {
				t.Errorf("the model was called %d times, want once", n)
			}
			if h := e.history(); len(h) != 2 {
				t.Errorf("history has %d messages, want the request and the reply: %+v", len(h), h)
			}
		})
	}
}

func pendingID(ev agent.Event) int64 {
	switch {
	case ev.Question != nil:
		return ev.Question.PendingID
	case ev.Approval != nil:
		return ev.Approval.PendingID
	}
	return 0
}
