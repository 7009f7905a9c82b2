// Connecting: a server that acts as each user's own account asks, through
// the hub, for the calling user to connect theirs (mcpgram.Connector). It is
// a form of its own mode (ModeConnect), kept in the store like the
// others: the card names the server and its domain and holds the sign-in
// link; the call waits. The browser comes back to PUBLIC_URL, whose
// handler finishes the sign-in on whichever instance gets it and closes
// the form (Connected), or, without a public URL, to a loopback address
// that does not load, which the user copies into the chat: the typed
// reply is taken as that address, finished, and never kept.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// ModeConnect is the Mode of a form that asks the user to connect their
// own account to a server.
const ModeConnect = "connect"

// Connections are the sign-ins the agent's forms carry: an admin's
// sign-in of the operator to a server, from a chat (SignIn, AwaitSignIn),
// a browser's return to PUBLIC_URL, which closes the form it belongs to
// (Finishable, Connected), and a group's form or sign-in opened in its
// user's private chat (OpenPrivately). A user's own Connect is asked by
// a call (Agent.Connect).
type Connections struct{ a *Agent }

// NewConnections returns the sign-ins of a's forms.
func NewConnections(a *Agent) *Connections { return &Connections{a: a} }

// SignIns finishes sign-ins, and names the one a callback belongs to;
// *oauth.Manager is one.
type SignIns interface {
	FinishAs(ctx context.Context, query url.Values, server, userID string) (mcpgram.FinishedSignIn, error)
	Pending(ctx context.Context, query url.Values) (mcpgram.FinishedSignIn, error)
}

// Connect implements mcpgram.Connector for the calls of turns: it stores a
// connect form, begins the sign-in, shows the card (EventForm) and waits
// for the sign-in to finish, the user to cancel, the form to expire
// (ApprovalTimeout) or the call to end. A call made outside a turn has
// nobody to ask, and gets cancel. In a group the form is answered in the
// user's own chat (see OpenPrivately).
func (a *Agent) Connect(ctx context.Context, c mcpgram.Connection) (mcpgram.ElicitAction, error) {
	ask, ok := ctx.Value(askerKey{}).(*asker)
	if !ok || ask.caller.ChatID != c.Caller.ChatID || ask.caller.UserID != c.Caller.UserID || c.Caller.UserID == "" {
		return mcpgram.ElicitCancel, nil
	}
	if !ask.patience.hold() {
		a.logger.Info(msgNobodyToAsk, "server", c.Server)
		return mcpgram.ElicitCancel, nil
	}
	defer ask.patience.release()
	p := formPayload{Server: c.Server, Mode: ModeConnect, Host: c.Host(), PasteBack: a.cfg.RedirectURI == mcpgram.PasteBackRedirect,
		Private: a.inGroup(c.Caller)}
	payload, _ := json.Marshal(p)
	expires := a.cfg.Now().Add(a.cfg.ApprovalTimeout)
	id, err := a.cfg.Store.CreateForm(ctx, store.Form{ChatID: c.Caller.ChatID, UserID: c.Caller.UserID, Payload: string(payload), ExpiresAt: expires})
	if err != nil {
		return mcpgram.ElicitCancel, fmt.Errorf("store form: %w", err)
	}
	wake := a.waitFor(id, c.Caller)
	defer a.stopWaiting(id)
	// In a group the sign-in begins only once the card is opened in the
	// user's own chat (OpenPrivately): until then its link exists nowhere.
	if !p.Private {
		if p.URL, err = c.Begin(ctx, a.cfg.RedirectURI, signInTag(id, "")); err == nil {
			err = a.setPayload(ctx, id, p)
		}
	}
	if err != nil {
		a.closeForm(ctx, id, FormRefused)
		ask.emit.send(Event{Kind: EventNotice, Server: c.Server, Text: fmt.Sprintf("Connecting your account to %s could not start: %s", c.Server, userError(err))})
		return mcpgram.ElicitCancel, err
	}
	f, err := a.cfg.Store.GetForm(ctx, id)
	if err != nil {
		return mcpgram.ElicitCancel, err
	}
	view, err := formView(f)
	if err != nil {
		return mcpgram.ElicitCancel, err
	}
	ask.emit.send(Event{Kind: EventForm, Server: c.Server, Form: view})
	f, outcome := a.awaitForm(ctx, id, wake)
	// Closed by the clock, the call, or a sign-in finished in a browser
	// (which has no card to change): the card shows it.
	if v, err := formView(f); err == nil {
		if outcome != "" {
			v.Outcome = outcome
		}
		ask.emit.send(Event{Kind: EventFormClosed, Server: c.Server, Form: v})
	}
	switch f.Resolution {
	case FormAccepted:
		return mcpgram.ElicitAccept, nil
	case FormDeclined:
		return mcpgram.ElicitDecline, nil
	}
	return mcpgram.ElicitCancel, nil
}

// userError is what a user may read of a failed sign-in's start.
func userError(err error) string {
	if errors.Is(err, mcpgram.ErrNoKey) {
		return "the bot's operator has not set OAUTH_KEY, which keeps sign-ins."
	}
	return "the server's sign-in could not be reached or refused; try again later."
}

// setPayload replaces the payload of open form id.
func (a *Agent) setPayload(ctx context.Context, id int64, p formPayload) error {
	f, err := a.cfg.Store.GetForm(ctx, id)
	if err != nil {
		return err
	}
	payload, _ := json.Marshal(p)
	return a.saveForm(ctx, id, f.Version, string(payload), "")
}

// closeForm closes form id as resolution, if it is still open.
func (a *Agent) closeForm(ctx context.Context, id int64, resolution string) {
	ctx = context.WithoutCancel(ctx)
	f, err := a.cfg.Store.GetForm(ctx, id)
	if err == nil && f.IsOpen() {
		err = a.saveForm(ctx, id, f.Version, f.Payload, resolution)
	}
	if err != nil && !errors.Is(err, store.ErrResolved) {
		a.logger.Error("close form", "form", id, "err", err)
	}
}

// saveForm is the store's SaveForm, but for what a form that closes
// keeps: a connect form's sign-in address, which carries its state, is
// kept only while the card is open, for the card's button.
func (a *Agent) saveForm(ctx context.Context, id, version int64, payload, resolution string) error {
	var p formPayload
	if resolution != "" && json.Unmarshal([]byte(payload), &p) == nil && p.Mode == ModeConnect && p.URL != "" {
		p.URL = ""
		b, _ := json.Marshal(p)
		payload = string(b)
	}
	return a.cfg.Store.SaveForm(ctx, id, version, payload, resolution)
}

// connectInput applies in to the connect form f (v as shown): Cancel or
// Decline closes it as declined; a typed reply is the address the
// browser ended on, finished as the sign-in of caller to its server. The
// reply is kept nowhere.
func (a *Agent) connectInput(ctx context.Context, caller mcpgram.Caller, f store.Form, v *Form, in FormInput) (*Form, error) {
	var resolution string
	switch in.Op {
	case FormDecline, FormCancel:
		resolution = FormDeclined
	case FormType:
		user := caller.UserID
		if v.Operator {
			user = "" // an admin signs in for every chat
		}
		if v.Note = a.finishPasted(ctx, f.ID, user, v.Server, in.Text); v.Note != "" {
			return v, nil
		}
		resolution = FormAccepted
	default:
		v.Note = "That does not apply here."
		return v, nil
	}
	switch err := a.saveForm(ctx, f.ID, f.Version, f.Payload, resolution); {
	case errors.Is(err, store.ErrResolved), errors.Is(err, store.ErrChanged):
		return nil, ErrStale
	case err != nil:
		return nil, err
	}
	v.Outcome = resolution
	a.wakeWaiter(f.ID)
	return v, nil
}

// finishPasted finishes the sign-in of user to server from the address
// text that the browser ended on, if it was begun for form id where it is
// answered (see Finishable), and returns "" or what went wrong, for the
// user.
func (a *Agent) finishPasted(ctx context.Context, id int64, user, server, text string) string {
	const how = "Copy the whole address from your browser's address bar after signing in, and send it here."
	u, err := url.Parse(strings.TrimSpace(text))
	q := url.Values{}
	if err == nil {
		q = u.Query()
	}
	if err != nil || u.Scheme == "" || u.Host == "" || q.Get("state") == "" || (q.Get("code") == "" && q.Get("error") == "") {
		return "That is not the address your browser ended on. " + how
	}
	if a.cfg.SignIns == nil {
		return "Sign-ins cannot be finished here."
	}
	if p, err := a.cfg.SignIns.Pending(ctx, q); err == nil && p.UserID == user && p.Server == server {
		if tagged, _, err := parseSignInTag(p.Tag); err != nil || tagged != id || NewConnections(a).Finishable(ctx, p) != nil {
			return "That address is of another sign-in of yours than this card's, so nothing was changed. " + how
		}
	}
	_, err = a.cfg.SignIns.FinishAs(ctx, q, server, user)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, mcpgram.ErrNotYours):
		return "That address belongs to someone else's sign-in, so nothing was changed. " + how
	case errors.Is(err, mcpgram.ErrUnknownState):
		return "That sign-in address is unknown, already used or expired, so nothing was changed. " + how
	}
	a.logger.Warn("finish a pasted sign-in", "server", server, "err", err)
	return "The sign-in did not succeed, so nothing was changed; press Cancel and ask again to start over."
}

// connectForm is connect form id, and its payload, where it is the sign-in
// s's: the same server and user (the operator's, "", for an admin's Sign
// in). ErrStale where it is gone, ErrNotYours where it is another's.
func (a *Agent) connectForm(ctx context.Context, id int64, s mcpgram.FinishedSignIn) (store.Form, formPayload, error) {
	var p formPayload
	f, err := a.cfg.Store.GetForm(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return f, p, ErrStale
	case err != nil:
		return f, p, err
	}
	if json.Unmarshal([]byte(f.Payload), &p) != nil || p.Mode != ModeConnect {
		return f, p, ErrNotYours
	}
	owner := f.UserID
	if p.Operator {
		owner = ""
	}
	if p.Server != s.Server || owner != s.UserID {
		return f, p, ErrNotYours
	}
	return f, p, nil
}

// Connected closes, as accepted, the connect form that the finished
// sign-in done was begun for (its Tag), if it is still open and is the
// same user's for the same server, and wakes the call waiting for it
// here; the call on another instance finds it at its next look.
func (cs *Connections) Connected(ctx context.Context, done mcpgram.FinishedSignIn) error {
	a := cs.a
	id, _, err := parseSignInTag(done.Tag)
	if err != nil {
		return ErrStale
	}
	f, _, err := a.connectForm(ctx, id, done)
	if err != nil {
		return err
	}
	if !f.IsOpen() {
		return ErrStale
	}
	switch err := a.saveForm(ctx, id, f.Version, f.Payload, FormAccepted); {
	case errors.Is(err, store.ErrResolved), errors.Is(err, store.ErrChanged):
		return ErrStale
	case err != nil:
		return err
	}
	a.wakeWaiter(id)
	return nil
}

// SignIn opens, for caller (an admin: the front end checks), the card of
// the operator's sign-in to server, a connect form that no call waits
// for: begin begins the sign-in, whose browser comes back to RedirectURI,
// bound to the form. The front end shows the form and, once it closes
// as accepted, reconnects the server. Pressed in a group, it is answered
// in the admin's own chat (see OpenPrivately).
func (cs *Connections) SignIn(ctx context.Context, caller mcpgram.Caller, server string, begin func(ctx context.Context, redirectURI, tag string) (authURL, host string, err error)) (*Form, error) {
	a := cs.a
	p := formPayload{Server: server, Mode: ModeConnect, Operator: true, PasteBack: a.cfg.RedirectURI == mcpgram.PasteBackRedirect,
		Private: a.inGroup(caller)}
	payload, _ := json.Marshal(p)
	expires := a.cfg.Now().Add(a.cfg.ApprovalTimeout)
	id, err := a.cfg.Store.CreateForm(ctx, store.Form{ChatID: caller.ChatID, UserID: caller.UserID, Payload: string(payload), ExpiresAt: expires})
	if err != nil {
		return nil, fmt.Errorf("store form: %w", err)
	}
	if !p.Private { // else begun once opened (see Connect)
		if p.URL, p.Host, err = begin(ctx, a.cfg.RedirectURI, signInTag(id, "")); err == nil {
			err = a.setPayload(ctx, id, p)
		}
	}
	if err != nil {
		a.closeForm(ctx, id, FormRefused)
		return nil, err
	}
	f, err := a.cfg.Store.GetForm(ctx, id)
	if err != nil {
		return nil, err
	}
	return formView(f)
}

// AwaitSignIn waits for the operator's sign-in card id (SignIn's) to
// close: signed in (a browser back at PUBLIC_URL, on any instance, or an
// address pasted), cancelled, or expired after ApprovalTimeout, which it
// closes it as. It returns the card as closed; if ctx ends first, it
// closes it as stopped and returns ctx's error. No call waits for such a
// card: this is for the front end that showed it, to show how it ended.
func (cs *Connections) AwaitSignIn(ctx context.Context, id int64) (*Form, error) {
	a := cs.a
	wake := a.waitFor(id, mcpgram.Caller{}) // nobody's messages are routed to it
	defer a.stopWaiting(id)
	f, outcome := a.awaitForm(ctx, id, wake)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := formView(f)
	if err != nil {
		return nil, err
	}
	if outcome != "" {
		v.Outcome = outcome
	}
	return v, nil
}

// isSignInForm reports whether f is the operator's sign-in of an admin.
func isSignInForm(f store.Form) bool {
	var p formPayload
	return json.Unmarshal([]byte(f.Payload), &p) == nil && p.Mode == ModeConnect && p.Operator
}
