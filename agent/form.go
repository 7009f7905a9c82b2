// Forms: what an MCP server asks the user in the middle of a tool call
// (an elicitation). Unlike a question or an approval, it does not end the
// turn: the call waits for the answer, and the turn with it. The form is
// in the store while it waits, with the answers so far, so that a press
// or a reply reaching another instance sharing the store is taken there:
// the waiting call reads the answer from the store, woken at once when
// the answer was given on its own instance, within Options.FormPoll when
// on another. What the user answers goes to the server only: it is no
// part of the conversation, and the model sees of it only what the tool's
// result says.
//
// A restart mid-form loses the call (the server's request went with the
// process): the chat's next turn (the inbox replays the message that
// started the call) closes the form as interrupted, and the model learns
// that the call's outcome is unknown, as for any call a restart cut short.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/form"
	"github.com/mcpgram/mcpgram/store"
)

// DefaultFormPoll is how often a call waiting for a form looks for an
// answer given on another instance.
const DefaultFormPoll = time.Second

// Forms take the users' answers to the forms the agent's calls wait
// for (Agent.Elicit, Agent.Connect) and to prompts' forms. They share the
// agent's waiting calls, so that an answer given here wakes its call at
// once.
type Forms struct{ a *Agent }

// NewForms returns the forms of a's calls.
func NewForms(a *Agent) *Forms { return &Forms{a: a} }

// maxFormMessage bounds the server's message kept with a form; a front
// end shows less.
const maxFormMessage = 4000

// How a form closed (Form.Outcome).
const (
	FormAccepted    = "accept"
	FormDeclined    = "decline"
	FormCancelled   = "cancel"
	FormExpired     = "expired"     // nobody answered in time: the server got cancel
	FormStopped     = "stopped"     // the call ended first (stopped, or the server gave up)
	FormInterrupted = "interrupted" // a restart lost the call
	FormRefused     = "refused"     // the server asked for what mcpgram cannot show
)

// A Form is a question a server asks the user mid-call, as a front end
// shows it: the server's message, and the fields and answers so far (form
// mode) or the URL to visit (URL mode).
type Form struct {
	ID      int64
	Server  string
	Tool    string // the tool whose call asks, or "" (see mcpgram.Elicitation)
	URI     string // the resource being read, when that asks
	Mode    string // mcpgram.ElicitForm or mcpgram.ElicitURL
	Message string
	URL     string
	// Fields and State are the form and the answers so far (form mode).
	Fields    *form.Form
	State     form.State
	ExpiresAt time.Time
	// Outcome says how the form closed (Form* constants); "" while open.
	Outcome string
	// Prompt names the prompt whose arguments a ModePrompt form asks;
	// Suggestions are its server's suggestions for the current field,
	// which FormChoose takes by index.
	Prompt      string
	Suggestions []string
	// Host is the full domain of the server a ModeConnect form connects
	// to; PasteBack says the user is to send the address their browser
	// ended on (see Options.RedirectURI).
	Host      string
	PasteBack bool
	// Operator: the ModeConnect form signs the operator in, for every
	// chat (an admin's, from /servers); no call waits for it.
	Operator bool
	// Private: the form was asked in a group and is answered only in its
	// user's own chat with the bot, AnswerIn once opened there (see
	// OpenPrivately); in the group, only Cancel and Decline.
	Private  bool
	AnswerIn string
	// TypedSecret: the input just given was typed into a field that asks
	// for a secret (form.Field.Secret), which a front end takes out of
	// view.
	TypedSecret bool
	// Note says why the input just given changed nothing: an answer the
	// schema refuses, a submit with fields missing, a button of an
	// earlier field. It is for the user, who may try again.
	Note string
	// Version is the stored form's version this view shows: each input
	// that changes the form makes a greater one, so that a front end
	// whose views of one form cross (two inputs handled at once) shows
	// the latest, not the last to arrive.
	Version int64
}

// Open reports whether f still waits for the user.
func (f *Form) Open() bool { return f.Outcome == "" }

// A FormOp is what an input does to a form.
type FormOp int

// The inputs a front end gives a form.
const (
	FormChoose  FormOp = iota + 1 // Option of the current choice or yes/no field
	FormToggle                    // Option of the current multi-choice field on or off
	FormDone                      // the current multi-choice field is done
	FormDefault                   // the current field takes its default
	FormNext                      // on to the next field without answering
	FormBack                      // back to the field before
	FormType                      // Text answers the current field
	FormSubmit                    // send the form (URL mode: the user is done)
	FormDecline                   // refuse
	FormCancel                    // dismiss
)

// A FormInput is one press or typed reply.
type FormInput struct {
	Op     FormOp
	Option int
	Text   string
	// Step is the field the pressed button belongs to (Form.State.Step
	// when it was shown), so that a press of an earlier card changes
	// nothing; -1 for inputs that do not depend on it.
	Step int
}

// formPayload is a form as the store keeps it.
type formPayload struct {
	Server  string          `json:"server"`
	Tool    string          `json:"tool,omitempty"`
	URI     string          `json:"uri,omitempty"`
	Mode    string          `json:"mode"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema,omitempty"`
	URL     string          `json:"url,omitempty"`
	State   form.State      `json:"state"`
	// Prompt names the prompt of a ModePrompt form, and Suggest holds the
	// server's suggestions for one of its fields.
	Prompt  string      `json:"prompt,omitempty"`
	Suggest *suggestion `json:"suggest,omitempty"`
	// Host is the full domain of the server a ModeConnect form connects
	// to, and PasteBack says the user sends the address the browser ended
	// on (there is no public URL to come back to).
	Host      string `json:"host,omitempty"`
	PasteBack bool   `json:"paste_back,omitempty"`
	// Operator: the form signs the operator in (an admin's, from
	// /servers), for every chat.
	Operator bool `json:"operator,omitempty"`
	// Private: asked in a group, the form is answered in its user's own
	// chat, AnswerIn once opened there (see Form.Private).
	Private  bool   `json:"private,omitempty"`
	AnswerIn string `json:"answer_in,omitempty"`
}

// An asker is who a turn's calls ask: the turn's user, through its
// events. While it asks, the turn's patience with the call stops (nil: a
// call that never goes on in the background).
type asker struct {
	caller   mcpgram.Caller
	emit     *emitter
	patience *patience
}

type askerKey struct{}

func withAsker(ctx context.Context, t *turn, p *patience) context.Context {
	return context.WithValue(ctx, askerKey{}, &asker{caller: t.caller, emit: t.emit, patience: p})
}

// msgNobodyToAsk is logged when a call that went on in the background
// asks its user something: its turn is over, so nobody is asked, and the
// server gets cancel.
const msgNobodyToAsk = "a call in the background asked its user something; nobody to ask, so answered cancel"

// Asking returns ctx for requests made outside a turn for caller, such as
// those that answer what a task waits for: the questions their servers
// ask are shown through emit, as a turn's are, and answered the same way.
func (f *Forms) Asking(ctx context.Context, caller mcpgram.Caller, emit func(Event)) context.Context {
	return context.WithValue(ctx, askerKey{}, &asker{caller: caller, emit: &emitter{fn: emit, metrics: f.a.cfg.Metrics, a: f.a, ctx: ctx}})
}

// Elicit implements mcpgram.Elicitor for the calls of turns: it stores the
// form, shows it (EventForm), and waits for the user's answer, the form's
// expiry (ApprovalTimeout, then cancel) or the call's end. A call made
// outside a turn has nobody to ask, and gets cancel.
func (a *Agent) Elicit(ctx context.Context, e mcpgram.Elicitation) (mcpgram.ElicitResult, error) {
	cancel := mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}
	ask, ok := ctx.Value(askerKey{}).(*asker)
	if !ok || ask.caller.ChatID != e.Caller.ChatID || ask.caller.UserID != e.Caller.UserID {
		return cancel, nil
	}
	if !ask.patience.hold() {
		a.logger.Info(msgNobodyToAsk, "server", e.Server, "tool", e.Tool)
		return cancel, nil
	}
	defer ask.patience.release()
	p := formPayload{Server: e.Server, Tool: e.Tool, URI: e.URI, Mode: e.Mode, Message: cutRunes(e.Message, maxFormMessage), Schema: e.Schema, URL: e.URL}
	if why := refusal(e); why != "" {
		a.logger.Warn("a server asked the user for what cannot be shown; answered cancel", "server", e.Server, "tool", e.Tool, "why", why)
		ask.emit.send(Event{Kind: EventNotice, Server: e.Server, Tool: e.Tool,
			Text: fmt.Sprintf("%s asked you something that cannot be shown here (%s), so it was told no.", e.Server, why)})
		return cancel, nil
	}
	p.Private = e.Mode != mcpgram.ElicitURL && hasFields(e.Schema) && a.inGroup(e.Caller)
	payload, err := json.Marshal(p)
	if err != nil {
		return cancel, fmt.Errorf("store form: %w", err)
	}
	expires := a.cfg.Now().Add(a.cfg.ApprovalTimeout)
	id, err := a.cfg.Store.CreateForm(ctx, store.Form{ChatID: e.Caller.ChatID, UserID: e.Caller.UserID, Payload: string(payload), ExpiresAt: expires})
	if err != nil {
		return cancel, fmt.Errorf("store form: %w", err)
	}
	wake := a.waitFor(id, e.Caller)
	defer a.stopWaiting(id)
	view, err := formView(store.Form{ID: id, Payload: string(payload), ExpiresAt: expires})
	if err != nil {
		return cancel, err
	}
	ask.emit.send(Event{Kind: EventForm, Server: e.Server, Tool: e.Tool, URI: e.URI, Form: view})
	f, outcome := a.awaitForm(ctx, id, wake)
	if outcome != "" || p.Private {
		// Closed by the clock or the call: the user is told; an answer
		// the user gave was shown by the input that gave it, but one
		// given in their own chat not on the group's card.
		if v, err := formView(f); err == nil {
			if outcome != "" {
				v.Outcome = outcome
			}
			ask.emit.send(Event{Kind: EventFormClosed, Server: e.Server, Tool: e.Tool, URI: e.URI, Form: v})
		}
	}
	return formResult(f)
}

// refusal says why e cannot be shown, or "".
func refusal(e mcpgram.Elicitation) string {
	if e.Mode == mcpgram.ElicitURL {
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return "an address that is not a plain web address"
		}
		return ""
	}
	if _, err := form.Parse(e.Schema); err != nil {
		return strings.TrimPrefix(err.Error(), "form: ")
	}
	return ""
}

// awaitForm waits until form id is resolved, and returns it as last read.
// outcome is set when the wait, not the user, closed it: the expiry, or
// the call's end.
func (a *Agent) awaitForm(ctx context.Context, id int64, wake <-chan struct{}) (store.Form, string) {
	poll := time.NewTicker(a.cfg.FormPoll)
	defer poll.Stop()
	expiry := time.NewTimer(a.cfg.ApprovalTimeout)
	defer expiry.Stop()
	for {
		var closeAs string
		select {
		case <-wake:
		case <-poll.C:
		case <-expiry.C:
			closeAs = FormExpired
		case <-ctx.Done():
			closeAs = FormStopped
		}
		rctx := context.WithoutCancel(ctx)
		f, err := a.cfg.Store.GetForm(rctx, id)
		if err != nil {
			a.logger.Error("read form", "form", id, "err", err)
			if closeAs == "" {
				continue
			}
			return store.Form{ID: id, Resolution: closeAs}, closeAs
		}
		if !f.IsOpen() {
			return f, ""
		}
		if closeAs == "" {
			continue
		}
		switch err := a.saveForm(rctx, id, f.Version, f.Payload, closeAs); {
		case err == nil:
			f.Resolution = closeAs
			return f, closeAs
		case errors.Is(err, store.ErrChanged), errors.Is(err, store.ErrResolved):
			// An answer came just now: take it, or close again.
			if closeAs == FormStopped {
				continue
			}
		default:
			a.logger.Error("close form", "form", id, "err", err)
			f.Resolution = closeAs
			return f, closeAs
		}
	}
}

// formResult is what the server gets for a resolved form.
func formResult(f store.Form) (mcpgram.ElicitResult, error) {
	switch f.Resolution {
	case FormAccepted:
		var p formPayload
		if err := json.Unmarshal([]byte(f.Payload), &p); err != nil {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, fmt.Errorf("decode form %d: %w", f.ID, err)
		}
		if p.Mode == mcpgram.ElicitURL {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept}, nil
		}
		fm, err := form.Parse(p.Schema)
		if err != nil {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, fmt.Errorf("form %d: %w", f.ID, err)
		}
		content, err := fm.Submit(p.State)
		if err != nil {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, fmt.Errorf("form %d: %w", f.ID, err)
		}
		return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: content}, nil
	case FormDeclined:
		return mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, nil
	}
	return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
}

// formView is f as a front end shows it.
func formView(f store.Form) (*Form, error) {
	var p formPayload
	if err := json.Unmarshal([]byte(f.Payload), &p); err != nil {
		return nil, fmt.Errorf("decode form %d: %w", f.ID, err)
	}
	v := &Form{ID: f.ID, Server: p.Server, Tool: p.Tool, URI: p.URI, Mode: p.Mode, Message: p.Message, URL: p.URL,
		State: p.State, ExpiresAt: f.ExpiresAt, Outcome: f.Resolution, Prompt: p.Prompt, Host: p.Host, PasteBack: p.PasteBack, Operator: p.Operator,
		Private: p.Private, AnswerIn: p.AnswerIn, Version: f.Version}
	if p.Suggest != nil && p.Suggest.Step == p.State.Step {
		v.Suggestions = p.Suggest.Values
	}
	if p.Mode != mcpgram.ElicitURL && p.Mode != ModeConnect {
		fm, err := form.Parse(p.Schema)
		if err != nil {
			return nil, fmt.Errorf("form %d: %w", f.ID, err)
		}
		v.Fields = fm
	}
	return v, nil
}

// A waiter is a call waiting, on this instance, for a form of caller,
// answered in caller's chat or, once opened there, in answerIn.
type waiter struct {
	wake     chan struct{}
	caller   mcpgram.Caller
	answerIn string
}

// waitFor registers a waiter for form id on this instance; an input that
// resolves the form here wakes it at once.
func (a *Agent) waitFor(id int64, caller mcpgram.Caller) <-chan struct{} {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	w := &waiter{wake: make(chan struct{}, 1), caller: caller}
	a.waiting[id] = w
	return w.wake
}

func (a *Agent) stopWaiting(id int64) {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	delete(a.waiting, id)
}

// wakeWaiter wakes the call waiting for form id here, if any.
func (a *Agent) wakeWaiter(id int64) {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	if w, ok := a.waiting[id]; ok {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Waiting reports whether a call on this instance waits for a form of
// userID in chatID: a front end routes that user's messages there at once
// rather than behind the turn the call is part of.
func (fs *Forms) Waiting(chatID, userID string) bool {
	a := fs.a
	a.formMu.Lock()
	defer a.formMu.Unlock()
	for _, w := range a.waiting {
		if w.caller.UserID == userID && (w.caller.ChatID == chatID || w.answerIn == chatID) {
			return true
		}
	}
	return false
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
