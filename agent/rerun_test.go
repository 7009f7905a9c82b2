package agent_test

import (
	"context"
	"errors"
	"strings"
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
		// A task's end was delivered after the turn answered (a turn of
		// its own, which stores no request): the run again sends the
		// turn's own answer, not the delivery's.
		name: "after a task's delivery",
		stored: []store.Message{{Role: agent.RoleAssistant, Content: complete("Sent.")},
			{Role: agent.RoleTool, Content: "[use_mcp_tool for 'jobs'] The background task of this call is done.", TurnID: "00000000000000ff"},
			{Role: agent.RoleAssistant, Content: complete("Your report is ready.")}},
		want:    agent.Event{Kind: agent.EventAnswer, Text: "Sent."},
		history: 4,
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

// A press run again (its update, not marked done when the bot stopped) is
// the same turn, carried on from what it stored: after its answer, the
// answer is sent again; after the press was taken but before its call's
// outcome was stored, the model learns the outcome is unknown. No call
// runs again. A second press, another update, is still stale.
func TestPressRunAgainIsTheSameTurn(t *testing.T) {
	t.Parallel()
	const id = "00000000000004d5"
	ask := `<ask_followup_question><question>Which invoice?</question><options>["March","April"]</options></ask_followup_question>`
	for _, tc := range []struct {
		name string
		// first is the model's reply that opens the card; its next, to
		// the press or to the press run again, answers want.
		first string
		env   func(*testing.T, llmfake.Handler) *env
		press func(pending int64) agent.Request
		// stopped: the bot stopped right after the press was taken.
		stopped bool
		want    string
	}{
		{"approval, after the answer", "Adding.\n" + useTool("echo", "add", sum), approvalEnv,
			func(p int64) agent.Request {
				return agent.Request{Decision: &agent.Decision{PendingID: p, Approve: true}}
			}, false, "Done."},
		{"approval, during the call", "Adding.\n" + useTool("echo", "add", sum), approvalEnv,
			func(p int64) agent.Request {
				return agent.Request{Decision: &agent.Decision{PendingID: p, Approve: true}}
			}, true, "Not sure it ran."},
		{"question, after the answer", ask, func(t *testing.T, h llmfake.Handler) *env { return newEnv(t, h, setup{}) },
			func(p int64) agent.Request { return agent.Request{Answer: &agent.Answer{PendingID: p}} }, false, "Done."},
		{"question, before the answer was stored", ask, func(t *testing.T, h llmfake.Handler) *env { return newEnv(t, h, setup{}) },
			func(p int64) agent.Request { return agent.Request{Answer: &agent.Answer{PendingID: p}} }, true, "Done."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := tc.env(t, llmfake.Script(llmfake.Text(tc.first), llmfake.Text(complete(tc.want))))
			card := e.say("send the invoice").last(t)
			pending := pendingID(card)
			if pending == 0 {
				t.Fatalf("no card: %+v", card)
			}
			req := tc.press(pending)
			req.Caller, req.TurnID = alice, id
			if tc.stopped {
				// What a press leaves when the bot stops right after it
				// was taken.
				if err := e.db.ResolvePending(context.Background(), pending, "answered", id); err != nil {
					t.Fatal(err)
				}
			} else if r, err := e.turn(req); err != nil || r.last(t).Text != "Done." {
				t.Fatalf("the press: %+v, %v", r.last(t), err)
			}
			calls, audit := len(e.model.Calls()), len(e.audit())
			e.restart()
			r, err := e.turn(req)
			if err != nil {
				t.Fatalf("the press run again: %v", err)
			}
			if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != tc.want {
				t.Errorf("the press run again ended with %+v, want the answer %q", got, tc.want)
			}
			if s := r.kinds(agent.EventToolStart); len(s) != 0 || len(e.audit()) != audit {
				t.Errorf("a call ran again: %+v", s)
			}
			if n, want := len(e.model.Calls())-calls, btoi(tc.stopped); n != want {
				t.Errorf("the model was asked %d more times, want %d", n, want)
			}
			if tc.stopped && strings.Contains(tc.first, "use_mcp_tool") {
				if got := read(e.model.Calls()[calls].Request); !strings.Contains(got, agent.NoteUnknown) {
					t.Errorf("the model read %q, want the call's outcome unknown", got)
				}
			}
			// Another press, another update: stale, as before.
			req.TurnID = "00000000000004d6"
			if _, err := e.turn(req); !errors.Is(err, agent.ErrStale) {
				t.Errorf("a second press = %v, want ErrStale", err)
			}
		})
	}
}
