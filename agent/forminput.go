// Form inputs: the presses and replies that fill in a form, from any
// instance, checked when given.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/form"
	"github.com/mcpgram/mcpgram/store"
)

// saveTries bounds the reads and saves of one input when others keep
// saving the same form (presses of the same card at once).
const saveTries = 5

// FormInput applies in, given by caller, to form id and returns the form
// as it now stands: with Note set (and nothing changed) when the input
// will not do, with Outcome set when it closed the form, in which case the
// call waiting for it is woken. A form of another user or chat is
// ErrNotYours; one closed or past its time, ErrStale. A form asked in a
// group to be answered in its user's own chat (Form.Private) takes only
// Cancel and Decline in the group, and everything in the chat it was
// opened in (see OpenPrivately).
func (fs *Forms) FormInput(ctx context.Context, caller mcpgram.Caller, id int64, in FormInput) (*Form, error) {
	a := fs.a
	for range saveTries {
		f, err := a.cfg.Store.GetForm(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, ErrStale
		case err != nil:
			return nil, err
		case f.UserID != caller.UserID:
			return nil, ErrNotYours
		}
		v, err := formView(f)
		if err == nil && in.Op == FormType && v.Fields != nil {
			fd, asking := v.Fields.Current(v.State)
			v.TypedSecret = asking && fd.Secret()
		}
		switch {
		case err != nil:
			return nil, err
		case f.ChatID != caller.ChatID && (v.AnswerIn == "" || v.AnswerIn != caller.ChatID):
			return nil, ErrNotYours
		case !f.IsOpen() || !a.cfg.Now().Before(f.ExpiresAt):
			return nil, ErrStale
		case v.Private && caller.ChatID != v.AnswerIn && in.Op != FormCancel && in.Op != FormDecline:
			v.Note = "This is answered in your own chat with me, not here; nothing was taken."
			return v, nil
		}
		if v.Mode == ModeConnect {
			return a.connectInput(ctx, caller, f, v, in)
		}
		resolution, changed := applyInput(v, in)
		if !changed {
			return v, nil
		}
		var p formPayload
		if err := json.Unmarshal([]byte(f.Payload), &p); err != nil {
			return nil, fmt.Errorf("decode form %d: %w", id, err)
		}
		p.State = v.State
		if v.Mode == ModePrompt && resolution == "" && (p.Suggest == nil || p.Suggest.Step != v.State.Step) {
			a.suggest(ctx, caller, v, &p)
		}
		payload, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encode form %d: %w", id, err)
		}
		switch err := a.saveForm(ctx, id, f.Version, string(payload), resolution); {
		case errors.Is(err, store.ErrChanged):
			continue // another press came first: apply this one to its result
		case errors.Is(err, store.ErrResolved):
			return nil, ErrStale
		case err != nil:
			return nil, err
		}
		v.Version = f.Version + 1 // as saved
		if resolution != "" {
			v.Outcome = resolution
			a.wakeWaiter(id)
		}
		return v, nil
	}
	return nil, fmt.Errorf("form %d: %d presses in a row lost to others", id, saveTries)
}

// applyInput applies in to v. changed reports a change to save; resolution
// is set when in closes the form. An input that will not do leaves v as
// it was, with Note saying why.
func applyInput(v *Form, in FormInput) (resolution string, changed bool) {
	switch in.Op {
	case FormDecline:
		return FormDeclined, true
	case FormCancel:
		return FormCancelled, true
	}
	if v.Mode == mcpgram.ElicitURL {
		if in.Op == FormSubmit {
			return FormAccepted, true
		}
		v.Note = "That does not apply here."
		return "", false
	}
	if in.Op == FormSubmit {
		return submit(v)
	}
	if in.Step >= 0 && in.Step != v.State.Step && in.Op != FormType {
		v.Note = "That button belongs to another field; here is the form as it is now."
		return "", false
	}
	if fd, ok := v.Fields.Current(v.State); ok && v.Mode == ModePrompt && in.Op == FormChoose && fd.Kind.Typed() {
		// A suggestion of the server, taken as if typed.
		if in.Option < 0 || in.Option >= len(v.Suggestions) {
			v.Note = "That suggestion is no longer offered."
			return "", false
		}
		in = FormInput{Op: FormType, Text: v.Suggestions[in.Option], Step: in.Step}
	}
	st := v.State
	var err error
	switch in.Op {
	case FormChoose:
		err = v.Fields.Choose(&st, in.Option)
	case FormToggle:
		err = v.Fields.Toggle(&st, in.Option)
	case FormDone:
		err = v.Fields.Done(&st)
	case FormDefault:
		err = v.Fields.TakeDefault(&st)
	case FormNext:
		err = v.Fields.Next(&st)
	case FormBack:
		err = v.Fields.Back(&st)
	case FormType:
		err = v.Fields.Type(&st, in.Text)
	default:
		err = form.ErrWrongField
	}
	var inv *form.Invalid
	switch {
	case errors.As(err, &inv):
		v.Note = inv.Reason
		return "", false
	case err != nil:
		v.Note = "That does not apply to this field."
		return "", false
	}
	v.State = st
	return "", true
}

// submit closes v as accepted, unless a required field is still empty:
// then the form goes to the first of them, saying which are missing.
func submit(v *Form) (string, bool) {
	_, err := v.Fields.Submit(v.State)
	var missing *form.Missing
	if errors.As(err, &missing) {
		v.Note = "Still to fill in: " + joinNames(missing.Fields) + "."
		if v.State.Step == missing.Step {
			return "", false
		}
		v.State.Step = missing.Step
		return "", true
	}
	if err != nil {
		v.Note = err.Error()
		return "", false
	}
	return FormAccepted, true
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// closeOrphanForms closes the chat's open forms that no call here waits
// for: a turn of the chat starts, so the turn that asked them is over,
// lost to a restart (on this instance or the one that ran it before).
func (a *Agent) closeOrphanForms(ctx context.Context, chatID string) {
	fs, err := a.cfg.Store.OpenForms(ctx, chatID)
	if err != nil {
		a.logger.Error("open forms", "chat", chatID, "err", err)
		return
	}
	for _, f := range fs {
		a.formMu.Lock()
		_, live := a.waiting[f.ID]
		a.formMu.Unlock()
		if live || ((isPromptForm(f) || isSignInForm(f)) && a.cfg.Now().Before(f.ExpiresAt)) {
			// A prompt's form, and an admin's sign-in, wait for their
			// user, not for a call.
			continue
		}
		if err := a.saveForm(ctx, f.ID, f.Version, f.Payload, FormInterrupted); err != nil && !errors.Is(err, store.ErrResolved) && !errors.Is(err, store.ErrChanged) {
			a.logger.Error("close form", "form", f.ID, "err", err)
		}
	}
}
