package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A front end in the tests: it hands each form shown on to the test, and
// records the turn's events.
type formFront struct {
	recorder
	forms  chan *agent.Form
	closed chan *agent.Form
}

func newFormFront() *formFront {
	return &formFront{forms: make(chan *agent.Form, 16), closed: make(chan *agent.Form, 16)}
}

func (f *formFront) emit(ev agent.Event) {
	f.recorder.emit(ev)
	switch ev.Kind {
	case agent.EventForm:
		f.forms <- ev.Form
	case agent.EventFormClosed:
		f.closed <- ev.Form
	}
}

// startTurn runs a turn of alice's text in the background; the returned
// channel gives its error once it ends.
func (e *env) startTurn(text string, front *formFront) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		done <- e.agent.Turn(ctx, agent.Request{Caller: alice, Text: text}, front.emit)
	}()
	return done
}

// formEnv is newEnv on the test server hub/testdata/features as "f", the
// agent asking what it asks; opts and wire change the agent's options and
// wiring.
func formEnv(t *testing.T, legacy bool, model llmfake.Handler, opts func(*agent.Options), wire ...func(*wiring)) *env {
	t.Helper()
	return newEnv(t, model, setup{
		servers: map[string]any{"f": testenv.FeaturesEntry(t, legacy, "book", "secret", "ask", "loop", "visit")},
		elicit:  true,
		config: func(w *wiring) {
			w.FormPoll = 20 * time.Millisecond
			if opts != nil {
				opts(&w.Options)
			}
			for _, f := range wire {
				f(w)
			}
		},
	})
}

// toolThenDone calls tool on f with args, then answers with the result.
func toolThenDone(tool, args string) llmfake.Handler {
	return func(c llmfake.Call) llmfake.Reply {
		if last := c.Request.Last(); strings.Contains(last, "Result:") || strings.Contains(last, "Error:") {
			return llmfake.Text(complete("done: " + last))
		}
		return llmfake.Text(useTool("f", tool, args))
	}
}

func input(t *testing.T, e *env, who mcpgram.Caller, id int64, in agent.FormInput) *agent.Form {
	t.Helper()
	f, err := agent.NewForms(e.agent).FormInput(context.Background(), who, id, in)
	if err != nil {
		t.Fatalf("FormInput %+v: %v", in, err)
	}
	return f
}

// A form asked mid-call is shown, filled in press by press and reply by
// reply, and submitted; the server gets exactly the answers, and the turn
// goes on with the tool's result. In both eras of the protocol.
func TestFormFilledInDuringATurn(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			e := formEnv(t, legacy, toolThenDone("book", "{}"), nil)
			front := newFormFront()
			done := e.startTurn("book me a table", front)
			f := <-front.forms
			if f.Server != "f" || f.Tool != "book" || f.Mode != mcpgram.ElicitForm || !strings.HasPrefix(f.Message, "Book a table") || !f.Open() {
				t.Fatalf("form shown = %+v", f)
			}
			if cur, _ := f.Fields.Current(f.State); cur.Name != "date" {
				t.Fatalf("first field %q, want date (the server's order)", cur.Name)
			}
			f = input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormType, Text: "tomorrow", Step: -1})
			if f.Note == "" || f.State.Step != 0 {
				t.Errorf("an invalid date was taken: %+v", f)
			}
			f = input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormType, Text: "2026-12-24", Step: -1})
			f = input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormDefault, Step: f.State.Step})
			f = input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormChoose, Option: 1, Step: f.State.Step})
			stale := f.State.Step - 1
			if g := input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormChoose, Option: 0, Step: stale}); g.Note == "" || g.State.Step != f.State.Step {
				t.Errorf("a press of an earlier field's button changed the form: %+v", g)
			}
			f = input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormSubmit, Step: -1})
			if f.Outcome != agent.FormAccepted {
				t.Fatalf("submit: %+v", f)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			want := `{"action":"accept","content":{"date":"2026-12-24","party":2,"seating":"outdoor","vegetarian":false}}`
			if last := front.last(t); last.Kind != agent.EventAnswer || !strings.Contains(last.Text, want) {
				t.Errorf("the turn ended with %v %q, want the tool's result %s", last.Kind, last.Text, want)
			}
			if _, err := agent.NewForms(e.agent).FormInput(context.Background(), alice, f.ID, agent.FormInput{Op: agent.FormCancel}); !errors.Is(err, agent.ErrStale) {
				t.Errorf("input to a submitted form: %v, want ErrStale", err)
			}
		})
	}
}

// Only the turn's user may answer; a decline reaches the server as one.
func TestFormOnlyTheUser(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, toolThenDone("book", "{}"), nil)
	front := newFormFront()
	done := e.startTurn("book", front)
	f := <-front.forms
	for _, who := range []mcpgram.Caller{{UserID: "222", ChatID: alice.ChatID}, {UserID: alice.UserID, ChatID: "999"}} {
		if _, err := agent.NewForms(e.agent).FormInput(context.Background(), who, f.ID, agent.FormInput{Op: agent.FormSubmit, Step: -1}); !errors.Is(err, agent.ErrNotYours) {
			t.Errorf("%+v answered alice's form: %v, want ErrNotYours", who, err)
		}
	}
	input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormDecline})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := front.last(t); !strings.Contains(last.Text, `{"action":"decline","content":null}`) {
		t.Errorf("the server got %q, want a decline", last.Text)
	}
}

// What the user types into a form goes to the server, never into the
// conversation: neither the model nor the stored history sees it, unless
// the tool's result says it.
func TestFormAnswerNeverReachesTheModel(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-correct-horse"
	e := formEnv(t, false, toolThenDone("secret", "{}"), nil)
	front := newFormFront()
	done := e.startTurn("log me in", front)
	f := <-front.forms
	input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormType, Text: secret, Step: -1})
	input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormSubmit, Step: -1})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := front.last(t); !strings.Contains(last.Text, "accept: a password of 21 characters") {
		t.Fatalf("the tool's result %q", last.Text)
	}
	for _, c := range e.model.Calls() {
		for _, m := range c.Request.Messages {
			if strings.Contains(m.Content, secret) {
				t.Errorf("the model was sent the form's answer: %q", m.Content)
			}
		}
	}
	for _, m := range e.history() {
		if strings.Contains(m.Content, secret) {
			t.Errorf("the conversation stores the form's answer: %q", m.Content)
		}
	}
}

// A form nobody answers expires as cancel after the approval timeout; the
// front end is told, and the turn goes on.
func TestFormExpires(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, toolThenDone("book", "{}"), func(o *agent.Options) { o.ApprovalTimeout = 300 * time.Millisecond })
	front := newFormFront()
	done := e.startTurn("book", front)
	f := <-front.forms
	closed := <-front.closed
	if closed.ID != f.ID || closed.Outcome != agent.FormExpired {
		t.Errorf("closed %+v, want form %d expired", closed, f.ID)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := front.last(t); !strings.Contains(last.Text, `{"action":"cancel","content":null}`) {
		t.Errorf("the server got %q, want cancel", last.Text)
	}
	if _, err := agent.NewForms(e.agent).FormInput(context.Background(), alice, f.ID, agent.FormInput{Op: agent.FormSubmit, Step: -1}); !errors.Is(err, agent.ErrStale) {
		t.Errorf("a press after expiry: %v, want ErrStale", err)
	}
}

// A turn stopped while its call waits for a form closes the form, and the
// server gets cancel.
func TestFormStoppedWithTheTurn(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, toolThenDone("book", "{}"), nil)
	front := newFormFront()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.agent.Turn(ctx, agent.Request{Caller: alice, Text: "book"}, front.emit) }()
	f := <-front.forms
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("turn: %v, want cancelled", err)
	}
	closed := <-front.closed
	if closed.ID != f.ID || closed.Outcome != agent.FormStopped {
		t.Errorf("closed %+v, want stopped", closed)
	}
	got, err := e.db.GetForm(context.Background(), f.ID)
	if err != nil || got.IsOpen() {
		t.Errorf("form after the turn stopped: %+v, %v", got, err)
	}
}

// The form's answer may be given on another instance sharing the store
// (SQLite: another handle of the process; PostgreSQL: another connection
// pool, as another process has): the waiting call finds it there.
func TestFormAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			// The agent the hub asks is made once, before the hub
			// starts: on PostgreSQL it is made over the first pool.
			var mine, theirs agent.Store
			if engine == "postgres" {
				dsn := testenv.Postgres(t)
				pools := make([]*postgres.DB, 2)
				for i := range pools {
					db, err := postgres.Open(context.Background(), dsn)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = db.Close() })
					pools[i] = db
				}
				mine, theirs = pools[0], pools[1]
			}
			e := formEnv(t, false, toolThenDone("book", "{}"), nil, func(w *wiring) {
				if mine != nil {
					w.Store = mine
				}
			})
			if theirs == nil {
				theirs = e.db
			}
			front := newFormFront()
			done := e.startTurn("book", front)
			f := <-front.forms
			other, err := agent.New(theirs, e.hub, []agent.Model{nopModel{}}, agent.Options{Now: e.clock})
			if err != nil {
				t.Fatal(err)
			}
			if agent.NewForms(other).Waiting(alice.ChatID, alice.UserID) || !agent.NewForms(e.agent).Waiting(alice.ChatID, alice.UserID) {
				t.Error("Waiting: the call waits on the first instance only")
			}
			ctx := context.Background()
			for _, in := range []agent.FormInput{
				{Op: agent.FormType, Text: "2026-12-24", Step: -1},
				{Op: agent.FormDefault, Step: 1},
				{Op: agent.FormChoose, Option: 0, Step: 2},
				{Op: agent.FormSubmit, Step: -1},
			} {
				if f, err = agent.NewForms(other).FormInput(ctx, alice, f.ID, in); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if last := front.last(t); !strings.Contains(last.Text, `"seating":"indoor"`) {
				t.Errorf("the server got %q", last.Text)
			}
		})
	}
}

// A form left open by a restart (its call lost with the process) is
// closed by the chat's next turn, so that its card's buttons no longer
// take anything.
func TestFormInterruptedByRestart(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, func(llmfake.Call) llmfake.Reply { return llmfake.Text(complete("hello")) }, nil)
	ctx := context.Background()
	id, err := e.db.CreateForm(ctx, store.Form{ChatID: alice.ChatID, UserID: alice.UserID, Payload: `{"server":"f","mode":"form","message":"m","schema":{"type":"object","properties":{}}}`, ExpiresAt: e.clock().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e.say("hi")
	got, err := e.db.GetForm(ctx, id)
	if err != nil || got.Resolution != agent.FormInterrupted {
		t.Errorf("the orphan form: %+v, %v; want interrupted", got, err)
	}
	if _, err := agent.NewForms(e.agent).FormInput(ctx, alice, id, agent.FormInput{Op: agent.FormSubmit, Step: -1}); !errors.Is(err, agent.ErrStale) {
		t.Errorf("a press on it: %v, want ErrStale", err)
	}
}

// What cannot be shown (a form of 200 fields, a URL that is no web
// address) is refused with a notice, and the server gets cancel; a
// 10,000-character message is kept, cut, and the form still works.
func TestFormHostile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args, notice, got string
	}{
		{"200 fields", "ask", `{"fields": 200}`, "more than 50 fields", `{"action":"cancel","content":null}`},
		{"not a web address", "visit", `{"url": "javascript:alert(1)"}`, "not a plain web address", `{"action":"cancel","content":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := formEnv(t, false, toolThenDone(tt.tool, tt.args), nil)
			r := e.say("go")
			notes := r.kinds(agent.EventNotice)
			if len(notes) != 1 || !strings.Contains(notes[0].Text, tt.notice) || len(r.kinds(agent.EventForm)) != 0 {
				t.Errorf("notices %v, forms %d; want one saying %q and no form", notes, len(r.kinds(agent.EventForm)), tt.notice)
			}
			if last := r.last(t); !strings.Contains(last.Text, tt.got) {
				t.Errorf("the server got %q, want %s", last.Text, tt.got)
			}
		})
	}
	t.Run("10,000-character message", func(t *testing.T) {
		e := formEnv(t, false, toolThenDone("ask", `{"message": "0123456789", "repeat": 1000}`), nil)
		front := newFormFront()
		done := e.startTurn("go", front)
		f := <-front.forms
		if n := len([]rune(f.Message)); n > 4000 || !strings.HasPrefix(f.Message, "0123456789") {
			t.Errorf("message of %d runes kept, want it cut to at most 4000", n)
		}
		input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormCancel})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// A nopModel is a model an instance that answers no message needs.
type nopModel struct{}

func (nopModel) Profile() mcpgram.Profile { return mcpgram.Profile{Name: "nop", Model: "nop"} }
func (nopModel) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return nil, errors.New("not asked")
}

// An answer typed into a field that asks for a secret is marked so, valid
// or not, for the front end to take out of view; one typed into another
// field is not.
func TestFormTypedSecret(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tool, text string
		want       bool
	}{
		{"secret", "abc", true},
		{"secret", "hunter2", true},
		{"ask", "hunter2", false},
	} {
		t.Run(c.tool+" "+c.text, func(t *testing.T) {
			t.Parallel()
			e := formEnv(t, false, toolThenDone(c.tool, "{}"), nil)
			front := newFormFront()
			done := e.startTurn("go", front)
			f := <-front.forms
			if got := input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormType, Text: c.text, Step: -1}); got.TypedSecret != c.want {
				t.Errorf("TypedSecret = %v, want %v", got.TypedSecret, c.want)
			}
			input(t, e, alice, f.ID, agent.FormInput{Op: agent.FormCancel, Step: -1})
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
