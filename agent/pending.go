// Pending interactions, what questions and approvals share: each is one in
// the store, which a press may answer only while it is open and only by
// the user it was for.

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// authorize checks a button press against its pending interaction.
// A press run again whose turn resolved the interaction itself (see
// pressedBefore) gets ErrStale too, with the interaction.
func (a *Agent) authorize(ctx context.Context, caller mcpgram.Caller, id int64, kind string) (store.Pending, error) {
	p, err := a.cfg.Store.GetPending(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, ErrStale
	case err != nil:
		return p, err
	case p.ChatID != caller.ChatID || p.UserID != caller.UserID:
		return p, ErrNotYours
	case p.Kind != kind || !p.IsOpen():
		return p, ErrStale
	case !p.ExpiresAt.IsZero() && !a.cfg.Now().Before(p.ExpiresAt):
		// Expire will deny it and tell the model; the press is too late.
		return p, ErrStale
	}
	return p, nil
}

// resolve closes interaction id as resolution, by turn ("" for none).
// pressedBefore reports whether the press of turn, refused by authorize
// as err, is one that ran before and resolved p itself: its update, not
// marked done when the bot stopped, runs again, and its turn is to be
// carried on from what it stored (see rerun), not refused as a second
// press.
func pressedBefore(p store.Pending, err error, turn string) bool {
	return errors.Is(err, ErrStale) && turn != "" && !p.IsOpen() && p.ResolvedBy == turn
}

func (a *Agent) resolve(ctx context.Context, id int64, resolution, turn string) error {
	err := a.cfg.Store.ResolvePending(ctx, id, resolution, turn)
	if errors.Is(err, store.ErrResolved) || errors.Is(err, store.ErrNotFound) {
		return ErrStale // the other press of a double press
	}
	return err
}

// Open returns the chat's open question or approval as the event that
// asked it, so that a front end starting afresh (the terminal chat after a
// restart) can show it again and take its answer; ok is false when none
// is open, or when it has expired (Expire denies it).
func (a *Agent) Open(ctx context.Context, chatID string) (ev Event, ok bool, err error) {
	p, err := a.cfg.Store.OpenPending(ctx, chatID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Event{}, false, nil
	case err != nil:
		return Event{}, false, fmt.Errorf("open request of chat %q: %w", chatID, err)
	case !p.ExpiresAt.IsZero() && !a.cfg.Now().Before(p.ExpiresAt):
		return Event{}, false, nil
	}
	return pendingEvent(p)
}

// pendingEvent returns open question or approval p as the event that
// asked it; ok is false when it is an approval none of whose calls waits.
func pendingEvent(p store.Pending) (ev Event, ok bool, err error) {
	switch p.Kind {
	case store.KindQuestion:
		var q questionPayload
		if err := json.Unmarshal([]byte(p.Payload), &q); err != nil {
			return Event{}, false, fmt.Errorf("decode question %d: %w", p.ID, err)
		}
		return Event{Kind: EventQuestion, Question: &Question{PendingID: p.ID, Text: q.Question, Options: q.Options}}, true, nil
	case store.KindApproval:
		b, err := decodeBatch(p)
		if err != nil {
			return Event{}, false, err
		}
		i := b.waiting()
		if i < 0 {
			return Event{}, false, nil
		}
		c := b.Calls[i]
		return Event{Kind: EventApproval, Server: c.Server, Tool: c.Tool, URI: c.URI, Approval: &Approval{
			PendingID: p.ID, Server: c.Server, Tool: c.Tool, URI: c.URI, Arguments: c.Arguments, ExpiresAt: p.ExpiresAt, Consent: c.Consent,
		}}, true, nil
	}
	return Event{}, false, nil
}
