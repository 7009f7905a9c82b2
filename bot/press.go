package bot

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/store"
)

// pressAckAfter is how long a press waits for the agent's first event
// before it is acknowledged anyway; refusals come much sooner.
const pressAckAfter = 3 * time.Second

// handlePress handles a follow-up option or approval button, in the
// chat's lane: the press starts a turn.
func (b *Bot) handlePress(ctx context.Context, q *query, data callback.Data) {
	cq := q.CallbackQuery
	user := cq.From.ID
	if !b.isAllowed(user) {
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return
	}
	if !b.allowPress(ctx, cq) {
		return
	}
	p, refusal := b.cards.PressOf(cq, caller(user, q.key), data)
	if refusal != "" {
		b.tg.AnswerCallback(ctx, cq.ID, refusal, true)
		return
	}

	// The agent refuses a press (ErrNotYours, ErrStale) at once and emits
	// nothing; its first event means it accepted. A model slow to emit
	// must not leave the button spinning, so a timer accepts it too.
	var once sync.Once
	var accepted atomic.Bool
	onFirst := func() {
		once.Do(func() {
			accepted.Store(true)
			b.tg.AnswerCallback(ctx, cq.ID, p.Ack, false)
			b.cards.Answered(ctx, cq, q.at, q.key, data.Pending, p.Line)
		})
	}
	timer := time.AfterFunc(pressAckAfter, onFirst)
	err := b.runTurn(ctx, q.at, q.key, user, 0, p.Req, onFirst)
	timer.Stop()
	if accepted.Load() {
		return
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		b.tg.AnswerCallback(ctx, cq.ID, "This is someone else's request; only they can answer it.", true)
	case errors.Is(err, agent.ErrStale):
		b.tg.AnswerCallback(ctx, cq.ID, "This request is no longer open.", true)
	case err == nil:
		onFirst()
	case errors.Is(err, store.ErrUnavailable):
		b.tg.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; this is handled as soon as it is back.", false)
	default:
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
	}
}
