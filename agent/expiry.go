// Expiry: an approval request left open past its time is denied, and the
// conversation carries on without the user.

package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// Expire denies the approval requests that expired by now, telling the
// model "The user denied this operation.", and carries each conversation
// on as a turn reporting to emitFor(chatID) (nil: nowhere). Chats run
// concurrently; the errors of all are joined.
func (a *Agent) Expire(ctx context.Context, now time.Time, emitFor func(chatID string) func(Event)) error {
	ps, err := a.cfg.Store.ExpiredPending(ctx, now)
	if err != nil {
		return fmt.Errorf("expire approvals: %w", err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, p := range ps {
		var emit func(Event)
		if emitFor != nil {
			emit = emitFor(p.ChatID)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.expire(ctx, p, emit); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("expire pending %d of chat %q: %w", p.ID, p.ChatID, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (a *Agent) expire(ctx context.Context, p store.Pending, emit func(Event)) error {
	unlock, err := a.lock(ctx, p.ChatID)
	if err != nil {
		return err
	}
	defer unlock()
	if err := a.resolve(ctx, p.ID, "expired", ""); err != nil {
		if errors.Is(err, ErrStale) {
			return nil // answered while we waited for the chat
		}
		return err
	}
	if p.Kind != store.KindApproval {
		return nil
	}
	b, err := decodeBatch(p)
	if err != nil {
		return err
	}
	caller, id := mcpgram.Caller{UserID: p.UserID, ChatID: p.ChatID}, NewTurnID()
	ctx = withTurn(ctx, id, caller)
	t, err := a.startTurn(ctx, caller, p.ConversationID, id, emit)
	if err != nil {
		return t.fail(ctx, msgInternal, err)
	}
	for i := range b.Calls {
		if b.Calls[i].Waiting {
			t.deny(ctx, &b.Calls[i], "expired")
		}
	}
	if b.OverBudget {
		msg, err := a.budgetSpent(ctx, id, caller)
		if err != nil {
			return err
		}
		if msg != "" {
			return t.settleOverBudget(ctx, b, msg)
		}
	}
	return t.resume(ctx, b)
}
