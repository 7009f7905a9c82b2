package bot

import (
	"context"
	"time"
)

// What the bot keeps, and for how long: the records /stats reads, the
// images users sent, and the resource links of its buttons (links.go).

// Defaults of the statistics.
const (
	// DefaultStatsRetention is how long the records of turns and model
	// calls are kept: /stats reads 7 days, the rest is a margin.
	DefaultStatsRetention = 30 * 24 * time.Hour
	// statsSweepEvery is how often records past the retention are deleted.
	statsSweepEvery = time.Hour
)

// pruneMediaLoop deletes the images older than MediaRetention, at start
// and every hour, until ctx ends.
func (b *Bot) pruneMediaLoop(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		n, err := b.store.MediaPrune(ctx, time.Now().Add(-b.cfg.MediaRetention))
		switch {
		case err != nil && ctx.Err() == nil:
			b.logger.Warn("delete images past MEDIA_RETENTION", "err", err)
		case n > 0:
			b.logger.Info("deleted images past MEDIA_RETENTION", "images", n, "retention", b.cfg.MediaRetention)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sweepStats deletes the records past the retention, and the expired
// resource links, at most once per statsSweepEvery; last is when it last
// did.
func (b *Bot) sweepStats(ctx context.Context, now time.Time, last *time.Time) {
	if !last.IsZero() && now.Sub(*last) < statsSweepEvery {
		return
	}
	*last = now
	b.links.Prune(ctx, now)
	n, err := b.store.PruneStats(ctx, now.Add(-b.cfg.StatsRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		b.logger.Warn("sweep old statistics", "err", err)
	case n > 0:
		b.logger.Info("swept old statistics", "rows", n, "retention", b.cfg.StatsRetention)
	}
}
