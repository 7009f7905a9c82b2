package bot

import (
	"context"
	"time"
)

// expireLoop denies approvals nobody answered in time, until ctx ends
// (see cards.Deck.Expire). The turns it continues run in work, which
// outlives ctx by the grace.
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
		if err := b.cards.Expire(work, time.Now(), b.agent.Expire); err != nil && work.Err() == nil {
			b.logger.Error("expire approvals", "err", err)
		}
	}
}
