// Pending interactions, what questions and approvals share: each is one in
// the store, which a press may answer only while it is open and only by
// the user it was for.

package agent

import (
	"context"
	"errors"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
)

// authorize checks a button press against its pending interaction.
func (a *Agent) authorize(ctx context.Context, caller hub.Caller, id int64, kind string) (store.Pending, error) {
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

func (a *Agent) resolve(ctx context.Context, id int64, resolution string) error {
	err := a.cfg.Store.ResolvePending(ctx, id, resolution)
	if errors.Is(err, store.ErrResolved) || errors.Is(err, store.ErrNotFound) {
		return ErrStale // the other press of a double press
	}
	return err
}
