// Answered in private: in a group (Options.Group) every member sees a
// card, so what only its user may see or type is not asked there. A
// sign-in (a user's Connect, an admin's Sign in) and a server's form with
// fields to fill in are kept as forms of the group, marked Private: the
// group's card says whose they are and leads to the user's own chat with
// the bot, where OpenPrivately opens the form, for that user alone and
// once. From then on it is answered there (a press, a typed answer, a
// pasted sign-in address), while the call that asked waits in the group's
// turn as before and gets the answer from the store. In the group the
// form takes only Cancel and Decline. A sign-in begins only as it is so
// opened, so its link never exists but in that chat, and a browser coming
// back to PUBLIC_URL binds only a sign-in so opened (Finishable).

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/form"
	"github.com/mcpgram/mcpgram/store"
)

// Errors of the forms answered in private.
var (
	// ErrOpened: OpenPrivately of a form opened already (a link used
	// again); nothing changed.
	ErrOpened = errors.New("this request was opened in your own chat already")
	// ErrNotOpened: a sign-in asked in a group whose browser came back
	// before its card was opened in the user's own chat; nothing changed.
	ErrNotOpened = errors.New("this sign-in was asked for in a group, and is finished only from its card in your private chat with the bot")
)

// inGroup reports whether caller's chat is a group (Options.Group).
func (a *Agent) inGroup(caller mcpgram.Caller) bool {
	return a.cfg.Group != nil && a.cfg.Group(caller.ChatID)
}

// hasFields reports whether schema asks for at least one field; one that
// cannot be read asks for none (and is refused before it is shown).
func hasFields(schema json.RawMessage) bool {
	fm, err := form.Parse(schema)
	return err == nil && len(fm.Fields) > 0
}

// A Begin begins the sign-in of user ("" the operator, for every chat) to
// server, whose browser is to come back to redirectURI, and hands tag back
// when it finishes; it returns the URL to send the person to and the
// server's host.
type Begin func(ctx context.Context, server, user, redirectURI, tag string) (authURL, host string, err error)

// OpenPrivately opens form id, asked in a group to be answered in private
// (Form.Private), in caller's chat, which the front end vouches is the
// chat of caller.UserID with the bot alone: from then on the form is
// answered there. A sign-in begins now, with begin: its link never
// existed before, and is shown only there. It returns the form as that
// chat shows it. A form of another user is ErrNotYours; one that is not
// such a form, is closed or past its time, ErrStale; one opened already,
// ErrOpened; a sign-in that could not begin, its error. None of them
// changes the form.
func (cs *Connections) OpenPrivately(ctx context.Context, caller mcpgram.Caller, id int64, begin Begin) (*Form, error) {
	a := cs.a
	for range saveTries {
		f, p, err := a.openable(ctx, caller, id)
		if err != nil {
			return nil, err
		}
		p.AnswerIn = caller.ChatID
		if p.Mode == ModeConnect && p.URL == "" {
			user := f.UserID
			if p.Operator {
				user = ""
			}
			url, host, err := begin(ctx, p.Server, user, a.cfg.RedirectURI, signInTag(id, caller.ChatID))
			if err != nil {
				return nil, fmt.Errorf("begin the sign-in to %s: %w", p.Server, err)
			}
			p.URL = url
			if host != "" {
				p.Host = host
			}
		}
		payload, _ := json.Marshal(p)
		switch err := a.cfg.Store.SaveForm(ctx, id, f.Version, string(payload), ""); {
		case errors.Is(err, store.ErrChanged):
			continue // an input or another opening came first: look again
		case errors.Is(err, store.ErrResolved):
			return nil, ErrStale
		case err != nil:
			return nil, err
		}
		a.answerIn(id, caller.ChatID)
		f.Payload = string(payload)
		return formView(f)
	}
	return nil, fmt.Errorf("form %d: %d tries in a row lost to others", id, saveTries)
}

// openable reads form id for OpenPrivately by caller, or says why it
// may not be opened.
func (a *Agent) openable(ctx context.Context, caller mcpgram.Caller, id int64) (store.Form, formPayload, error) {
	var p formPayload
	f, err := a.cfg.Store.GetForm(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return f, p, ErrStale
	case err != nil:
		return f, p, err
	case f.UserID != caller.UserID:
		return f, p, ErrNotYours
	}
	if err := json.Unmarshal([]byte(f.Payload), &p); err != nil {
		return f, p, fmt.Errorf("decode form %d: %w", id, err)
	}
	switch {
	case !p.Private || caller.ChatID == f.ChatID || !f.IsOpen() || !a.cfg.Now().Before(f.ExpiresAt):
		return f, p, ErrStale
	case p.AnswerIn != "":
		return f, p, ErrOpened
	}
	return f, p, nil
}

// answerIn routes the messages of the user a call here waits for form
// id to it from chat too (see Waiting).
func (a *Agent) answerIn(id int64, chat string) {
	a.formMu.Lock()
	defer a.formMu.Unlock()
	if w, ok := a.waiting[id]; ok {
		w.answerIn = chat
	}
}

// Finishable reports whether the sign-in under way pending, whose browser
// came back to PUBLIC_URL, may be finished there: nil unless its card (its
// Tag) is not its user's and server's (ErrNotYours), is gone (ErrStale),
// or was asked in a group and the sign-in was not begun where the card
// was opened in the user's own chat (ErrNotOpened: the tag records where
// it began). A sign-in begun for no card (an empty tag: the terminal's,
// the CLI's) has nothing to check.
func (cs *Connections) Finishable(ctx context.Context, pending mcpgram.FinishedSignIn) error {
	a := cs.a
	if pending.Tag == "" {
		return nil
	}
	id, chat, err := parseSignInTag(pending.Tag)
	if err != nil {
		return ErrStale
	}
	_, p, err := a.connectForm(ctx, id, pending)
	if err != nil {
		return err
	}
	switch {
	case p.Private && (p.AnswerIn == "" || chat != p.AnswerIn):
		return ErrNotOpened
	case !p.Private && chat != "":
		return ErrNotYours
	}
	return nil
}

// signInTag is the tag of a sign-in for form id (see oauth.SignIn.Tag):
// the form's id, and the chat the form was opened in (OpenPrivately),
// where the sign-in began and may alone be finished; "" for the form's
// own chat.
func signInTag(id int64, chat string) string {
	tag := strconv.FormatInt(id, 10)
	if chat != "" {
		tag += "@" + chat
	}
	return tag
}

// parseSignInTag reads a signInTag.
func parseSignInTag(tag string) (id int64, chat string, err error) {
	digits, chat, _ := strings.Cut(tag, "@")
	id, err = strconv.ParseInt(digits, 10, 64)
	return id, chat, err
}
