// Package retention deletes what the bot keeps once it is past its time:
// the images users sent (MEDIA_RETENTION), the records of turns and model
// calls /stats reads, and the expired resource links of the buttons
// tools' results got. Each failure is logged and left for the next sweep.
package retention

import (
	"context"
	"log/slog"
	"time"
)

// sweepEvery is how often what is past its time is deleted.
const sweepEvery = time.Hour

// A Store deletes the images and the records of the statistics older than
// a time (see store.Images and store.Statistics); *sqlite.DB and
// *postgres.DB are one.
type Store interface {
	MediaPrune(ctx context.Context, before time.Time) (int64, error)
	PruneStats(ctx context.Context, before time.Time) (int64, error)
}

// Links delete the expired resource links; *links.Links is one.
type Links interface {
	Prune(ctx context.Context, now time.Time)
}

// A Sweeper deletes what is past its retention.
type Sweeper struct {
	Store Store
	Links Links
	// Apps deletes the expired views of MCP Apps; nil: none kept.
	Apps Links
	// Media is how long the images users sent are kept, Stats the
	// records /stats reads.
	Media, Stats time.Duration
	Logger       *slog.Logger

	swept time.Time // when SweepStats last swept
}

// MediaLoop deletes the images older than Media, at start and every
// hour, until ctx ends.
func (s *Sweeper) MediaLoop(ctx context.Context) {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		n, err := s.Store.MediaPrune(ctx, time.Now().Add(-s.Media))
		switch {
		case err != nil && ctx.Err() == nil:
			s.Logger.Warn("delete images past MEDIA_RETENTION", "err", err)
		case n > 0:
			s.Logger.Info("deleted images past MEDIA_RETENTION", "images", n, "retention", s.Media)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// SweepStats deletes the records past Stats, and the expired resource
// links, at most once an hour, however often it is called at now: on the
// beat of a loop of the caller's. One goroutine calls it.
func (s *Sweeper) SweepStats(ctx context.Context, now time.Time) {
	if !s.swept.IsZero() && now.Sub(s.swept) < sweepEvery {
		return
	}
	s.swept = now
	s.Links.Prune(ctx, now)
	if s.Apps != nil {
		s.Apps.Prune(ctx, now)
	}
	n, err := s.Store.PruneStats(ctx, now.Add(-s.Stats))
	switch {
	case err != nil && ctx.Err() == nil:
		s.Logger.Warn("sweep old statistics", "err", err)
	case n > 0:
		s.Logger.Info("swept old statistics", "rows", n, "retention", s.Stats)
	}
}
