package agent_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
)

// In the tests, as in Telegram, a group's chat id is negative; a user's
// own chat with the bot has the user's id.
var (
	inGroup   = mcpgram.Caller{UserID: "111", ChatID: "-500"}
	ownChat   = mcpgram.Caller{UserID: "111", ChatID: "111"}
	member    = mcpgram.Caller{UserID: "222", ChatID: "-500"}
	memberOwn = mcpgram.Caller{UserID: "222", ChatID: "222"}
)

func isGroup(chatID string) bool { return strings.HasPrefix(chatID, "-") }

// startTurnAs runs a turn of caller's text in the background; the
// returned channel gives its error once it ends.
func (e *env) startTurnAs(caller mcpgram.Caller, text string, front *formFront) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		done <- e.agent.Turn(ctx, agent.Request{Caller: caller, Text: text}, front.emit)
	}()
	return done
}

// noBegin is the Begin of a test in which no sign-in may begin.
func noBegin(t *testing.T) agent.Begin {
	return func(context.Context, string, string, string, string) (string, string, error) {
		t.Error("a sign-in was begun")
		return "", "", errors.New("no sign-in here")
	}
}

// Which forms of a call are answered in the user's own chat: in a group,
// those with fields to fill in; a form without fields, a page to visit,
// and every form in a user's own chat stay where they were asked.
func TestFormAnsweredPrivatelyWhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, tool, args string
		caller           mcpgram.Caller
		want             bool
	}{
		{"a form with fields in a group", "ask", "{}", inGroup, true},
		{"a form with fields in the user's own chat", "ask", "{}", ownChat, false},
		{"a form without fields in a group", "ask", `{"schema": {"type": "object", "properties": {}}}`, inGroup, false},
		{"a page to visit in a group", "visit", `{"url": "https://example.com/"}`, inGroup, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := formEnv(t, false, toolThenDone(c.tool, c.args), func(o *agent.Options) { o.Group = isGroup })
			front := newFormFront()
			done := e.startTurnAs(c.caller, "go", front)
			f := <-front.forms
			if got := f.Private; got != c.want {
				t.Errorf("Private = %v, want %v", got, c.want)
			}
			input(t, e, c.caller, f.ID, agent.FormInput{Op: agent.FormCancel, Step: -1})
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A form asked in a group is answered in its user's own chat once opened
// there, and nowhere else: typed in the group it is refused with a note;
// from the user's own chat before it is opened, from another member, or
// opened by another member, it is not theirs; opened again, ErrOpened.
// Answered there, the call in the group's turn gets the answer, and the
// group is told the form closed.
func TestFormAnsweredPrivately(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, toolThenDone("ask", "{}"), func(o *agent.Options) { o.Group = isGroup })
	front := newFormFront()
	done := e.startTurnAs(inGroup, "go", front)
	f := <-front.forms
	if !f.Private || f.AnswerIn != "" {
		t.Fatalf("the group's form: Private %v, AnswerIn %q; want private, not opened", f.Private, f.AnswerIn)
	}
	typed := agent.FormInput{Op: agent.FormType, Text: "in the group", Step: -1}
	if got := input(t, e, inGroup, f.ID, typed); got.Note == "" || len(got.State.Values) != 0 {
		t.Errorf("typed in the group: note %q, answers %v; want a note and nothing taken", got.Note, got.State.Values)
	}
	forms, conns := agent.NewForms(e.agent), agent.NewConnections(e.agent)
	for _, c := range []struct {
		name string
		do   func() error
		want error
	}{
		{"typed in the user's own chat before opening", func() error { _, err := forms.FormInput(t.Context(), ownChat, f.ID, typed); return err }, agent.ErrNotYours},
		{"typed by another member in the group", func() error { _, err := forms.FormInput(t.Context(), member, f.ID, typed); return err }, agent.ErrNotYours},
		{"opened by another member", func() error { _, err := conns.OpenPrivately(t.Context(), memberOwn, f.ID, noBegin(t)); return err }, agent.ErrNotYours},
		{"opened in the group itself", func() error { _, err := conns.OpenPrivately(t.Context(), inGroup, f.ID, noBegin(t)); return err }, agent.ErrStale},
		{"opened by its user", func() error { _, err := conns.OpenPrivately(t.Context(), ownChat, f.ID, noBegin(t)); return err }, nil},
		{"opened again", func() error { _, err := conns.OpenPrivately(t.Context(), ownChat, f.ID, noBegin(t)); return err }, agent.ErrOpened},
		{"opened by another member once opened", func() error { _, err := conns.OpenPrivately(t.Context(), memberOwn, f.ID, noBegin(t)); return err }, agent.ErrNotYours},
		{"typed by another member in their own chat", func() error { _, err := forms.FormInput(t.Context(), memberOwn, f.ID, typed); return err }, agent.ErrNotYours},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.do(); !errors.Is(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	if !agent.NewForms(e.agent).Waiting("111", "111") || agent.NewForms(e.agent).Waiting("222", "222") {
		t.Error("the user's messages in their own chat do not go to the form at once, or another's do")
	}
	if got := input(t, e, inGroup, f.ID, typed); got.Note == "" {
		t.Error("once opened, an answer typed in the group was taken")
	}
	input(t, e, ownChat, f.ID, agent.FormInput{Op: agent.FormType, Text: "forty-two", Step: -1})
	input(t, e, ownChat, f.ID, agent.FormInput{Op: agent.FormSubmit, Step: -1})
	if closed := <-front.closed; closed.ID != f.ID || closed.Outcome != agent.FormAccepted {
		t.Errorf("the group was told %+v, want form %d accepted", closed, f.ID)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := front.last(t); !strings.Contains(last.Text, `{"action":"accept","content":{"answer":"forty-two"}}`) {
		t.Errorf("the tool's result %q", last.Text)
	}
	if _, err := agent.NewConnections(e.agent).OpenPrivately(t.Context(), ownChat, f.ID, noBegin(t)); !errors.Is(err, agent.ErrStale) {
		t.Errorf("opened once answered = %v, want ErrStale", err)
	}
}

// A form asked in a group may still be cancelled on the group's card by
// its user (and by nobody else).
func TestFormAnsweredPrivatelyCancelledInTheGroup(t *testing.T) {
	t.Parallel()
	e := formEnv(t, false, toolThenDone("ask", "{}"), func(o *agent.Options) { o.Group = isGroup })
	front := newFormFront()
	done := e.startTurnAs(inGroup, "go", front)
	f := <-front.forms
	if _, err := agent.NewForms(e.agent).FormInput(t.Context(), member, f.ID, agent.FormInput{Op: agent.FormCancel, Step: -1}); !errors.Is(err, agent.ErrNotYours) {
		t.Errorf("another member's Cancel = %v, want ErrNotYours", err)
	}
	if got := input(t, e, inGroup, f.ID, agent.FormInput{Op: agent.FormCancel, Step: -1}); got.Outcome != agent.FormCancelled {
		t.Errorf("outcome %q, want cancelled", got.Outcome)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := front.last(t); !strings.Contains(last.Text, `{"action":"cancel","content":null}`) {
		t.Errorf("the tool's result %q", last.Text)
	}
}

// A Connect asked in a group begins its sign-in only once opened in its
// user's own chat, so no link of it exists before; a flow of its card
// begun otherwise is never Finishable nor taken pasted, the one begun as
// it was opened is; a paste in the group is refused, exchanging no code;
// another member's paste in their own chat is not theirs. Opened, the
// paste there connects.
func TestConnectInAGroupFinishedPrivately(t *testing.T) {
	t.Parallel()
	e, m, fake := connectEnv(t, toolThenDoneOn("mine", "connect"), time.Minute)
	front := newFormFront()
	done := e.startTurnAs(inGroup, "connect me", front)
	f := <-front.forms
	if !f.Private || f.URL != "" {
		t.Fatalf("the group's connect form: Private %v, URL %q; want private, no link", f.Private, f.URL)
	}
	// A flow for the card, as if its link had been made in the group.
	early, _, err := e.hub.BeginConnect(t.Context(), "mine", inGroup.UserID, mcpgram.PasteBackRedirect, strconv.FormatInt(f.ID, 10))
	if err != nil {
		t.Fatal(err)
	}
	back, err := oauthfake.Authorize(t.Context(), early, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(back)
	pending, err := m.Pending(t.Context(), u.Query())
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.NewConnections(e.agent).Finishable(t.Context(), pending); !errors.Is(err, agent.ErrNotOpened) {
		t.Errorf("Finishable before opening = %v, want ErrNotOpened", err)
	}
	paste := agent.FormInput{Op: agent.FormType, Text: back, Step: -1}
	if got := input(t, e, inGroup, f.ID, paste); got.Note == "" || got.Outcome != "" {
		t.Errorf("pasted in the group: note %q, outcome %q; want a note, still open", got.Note, got.Outcome)
	}
	if _, err := agent.NewForms(e.agent).FormInput(t.Context(), memberOwn, f.ID, paste); !errors.Is(err, agent.ErrNotYours) {
		t.Errorf("another member's paste = %v, want ErrNotYours", err)
	}
	if n := fake.Counts().CodeExchanges; n != 0 {
		t.Fatalf("code exchanges = %d, want 0", n)
	}
	begin := func(ctx context.Context, server, user, redirectURI, tag string) (string, string, error) {
		if user != inGroup.UserID {
			t.Errorf("begun for user %q, want %q", user, inGroup.UserID)
		}
		return e.hub.BeginConnect(ctx, server, user, redirectURI, tag)
	}
	opened, err := agent.NewConnections(e.agent).OpenPrivately(t.Context(), ownChat, f.ID, begin)
	if err != nil || opened.URL == "" || opened.AnswerIn != ownChat.ChatID {
		t.Fatalf("OpenPrivately = %+v, %v; want the card with its link", opened, err)
	}
	if err := agent.NewConnections(e.agent).Finishable(t.Context(), pending); !errors.Is(err, agent.ErrNotOpened) {
		t.Errorf("Finishable of the early flow once opened = %v, want ErrNotOpened", err)
	}
	own, err := oauthfake.Authorize(t.Context(), opened.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ou, _ := url.Parse(own)
	if pending, err := m.Pending(t.Context(), ou.Query()); err != nil {
		t.Fatal(err)
	} else if err := agent.NewConnections(e.agent).Finishable(t.Context(), pending); err != nil {
		t.Errorf("Finishable of the flow begun as opened = %v, want nil", err)
	}
	if got := input(t, e, ownChat, f.ID, paste); !strings.Contains(got.Note, "another sign-in of yours") || got.Outcome != "" {
		t.Errorf("the early flow's address pasted in the user's own chat: note %q, outcome %q; want refused", got.Note, got.Outcome)
	}
	if n := fake.Counts().CodeExchanges; n != 0 {
		t.Fatalf("code exchanges = %d, want 0", n)
	}
	if got := input(t, e, ownChat, f.ID, agent.FormInput{Op: agent.FormType, Text: own, Step: -1}); got.Note != "" || got.Outcome != agent.FormAccepted {
		t.Errorf("pasted in the user's own chat: note %q, outcome %q; want connected", got.Note, got.Outcome)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A sign-in that cannot begin as its card is opened leaves the card as it
// was: the link may be used again.
func TestOpenPrivatelyBeginFails(t *testing.T) {
	t.Parallel()
	e, _, _ := connectEnv(t, toolThenDoneOn("mine", "connect"), time.Minute)
	front := newFormFront()
	done := e.startTurnAs(inGroup, "connect me", front)
	f := <-front.forms
	fail := func(context.Context, string, string, string, string) (string, string, error) {
		return "", "", errors.New("unreachable")
	}
	if _, err := agent.NewConnections(e.agent).OpenPrivately(t.Context(), ownChat, f.ID, fail); err == nil {
		t.Fatal("opened although the sign-in did not begin")
	}
	begin := func(ctx context.Context, server, user, redirectURI, tag string) (string, string, error) {
		return e.hub.BeginConnect(ctx, server, user, redirectURI, tag)
	}
	if _, err := agent.NewConnections(e.agent).OpenPrivately(t.Context(), ownChat, f.ID, begin); err != nil {
		t.Fatalf("opened again = %v, want opened", err)
	}
	input(t, e, ownChat, f.ID, agent.FormInput{Op: agent.FormCancel, Step: -1})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
