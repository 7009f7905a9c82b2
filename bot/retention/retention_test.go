package retention_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot/retention"
)

// kept records the cut-offs it was asked to delete before.
type kept struct {
	mu           sync.Mutex
	media, stats []time.Time
	links        []time.Time
	mediaAsked   chan struct{}
}

func (k *kept) MediaPrune(_ context.Context, before time.Time) (int64, error) {
	k.mu.Lock()
	k.media = append(k.media, before)
	k.mu.Unlock()
	k.mediaAsked <- struct{}{}
	return 1, nil
}

func (k *kept) PruneStats(_ context.Context, before time.Time) (int64, error) {
	k.stats = append(k.stats, before)
	return 0, nil
}

func (k *kept) Prune(_ context.Context, now time.Time) { k.links = append(k.links, now) }

// The statistics and the expired links are swept at the first call, then
// not again within the hour, however often asked.
func TestSweepStats(t *testing.T) {
	k := &kept{}
	s := &retention.Sweeper{Store: k, Links: k, Stats: 7 * 24 * time.Hour, Logger: slog.New(slog.DiscardHandler)}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, time.Minute, 59 * time.Minute, time.Hour, 90 * time.Minute, 2 * time.Hour} {
		s.SweepStats(t.Context(), at.Add(d))
	}
	want := []time.Time{at.Add(-7 * 24 * time.Hour), at.Add(time.Hour - 7*24*time.Hour), at.Add(2*time.Hour - 7*24*time.Hour)}
	if len(k.stats) != len(want) || len(k.links) != len(want) {
		t.Fatalf("swept the statistics at %v and the links at %v, want %d sweeps of each", k.stats, k.links, len(want))
	}
	for i := range want {
		if !k.stats[i].Equal(want[i]) {
			t.Errorf("sweep %d deleted the statistics before %v, want %v", i, k.stats[i], want[i])
		}
	}
}

// The images are swept at start, older than the retention, and the loop
// ends with its context.
func TestMediaLoop(t *testing.T) {
	k := &kept{mediaAsked: make(chan struct{}, 1)}
	s := &retention.Sweeper{Store: k, Links: k, Media: 30 * 24 * time.Hour, Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	before := time.Now()
	go func() { defer close(done); s.MediaLoop(ctx) }()
	<-k.mediaAsked
	cancel()
	<-done
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.media) != 1 || k.media[0].After(time.Now().Add(-s.Media)) || k.media[0].Before(before.Add(-s.Media)) {
		t.Errorf("deleted the images before %v, want one sweep of those older than %v", k.media, s.Media)
	}
}
