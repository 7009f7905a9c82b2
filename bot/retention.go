package bot

import (
	"context"
	"time"
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
