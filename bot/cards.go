package bot

import (
	"context"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/reply"
)

// expireLoop denies approvals nobody answered in time, until ctx ends.
// The turns it continues run in work, which outlives ctx by the grace.
func (b *Bot) expireLoop(ctx, work context.Context) {
	tick := time.NewTicker(b.cfg.ExpireInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The statistics' retention rides on the same beat: hourly is
		// plenty, and it needs no goroutine of its own.
		b.sweeper.SweepStats(work, time.Now())
		var ended []*reply.Reply
		emitFor := func(key string) func(agent.Event) {
			// Where the card was, as a shared forum's key names no topic.
			at, ok := b.cards.PlaceOf(key)
			if !ok {
				at, _ = chats.PlaceOf(key)
			}
			r := b.replies.New(reply.Spec{Base: work, Ctx: work, At: at, Key: key, OnFirst: func() {
				b.cards.CloseOpen(work, key, "approval", "⌛ <i>Expired: denied.</i>")
			}})
			ended = append(ended, r)
			return r.Emit
		}
		if err := b.agent.Expire(work, time.Now(), emitFor); err != nil && work.Err() == nil {
			b.logger.Error("expire approvals", "err", err)
		}
		for _, r := range ended {
			r.Finish()
		}
	}
}
