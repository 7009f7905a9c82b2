package bot

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpgram/mcpgram/bot/statsview"
	"github.com/mcpgram/mcpgram/store"
)

// /stats: the admins' look at the last 24 hours and 7 days, from what the
// store recorded (so it survives restarts and, on PostgreSQL, covers every
// instance), and the servers' health from the hub.

// Defaults of the statistics.
const (
	// DefaultStatsRetention is how long the records of turns and model
	// calls are kept: /stats reads 7 days, the rest is a margin.
	DefaultStatsRetention = 30 * 24 * time.Hour
	// statsSweepEvery is how often records past the retention are deleted.
	statsSweepEvery = time.Hour
	// statsTopUsers caps that list, for a phone.
	statsTopUsers = 5
)

func (b *Bot) showStats(ctx context.Context, chatID, user int64) {
	if !b.isAdmin(user) {
		b.say(ctx, chatID, "Sorry, only admins can see the statistics.")
		return
	}
	now := time.Now()
	for _, w := range []struct {
		title string
		span  time.Duration
	}{{"Last 24 hours", 24 * time.Hour}, {"Last 7 days", 7 * 24 * time.Hour}} {
		st, err := b.store.Stats(ctx, now.Add(-w.span), now, statsTopUsers)
		if err != nil {
			b.logger.Error("read statistics", "chat", chatID, "err", err)
			b.say(ctx, chatID, "Sorry, I could not read the statistics. Please try again.")
			return
		}
		b.say(ctx, chatID, statsview.Window(w.title, st))
	}
	b.sendChart(ctx, chatID, now)
	b.say(ctx, chatID, statsview.Servers(b.hub.Catalog()))
}

// sendChart sends the turns of the last 24 hours by hour and of the last
// 7 days by day as bars, when there were any.
func (b *Bot) sendChart(ctx context.Context, chatID int64, now time.Time) {
	day, err := b.store.Timeline(ctx, now.Add(-24*time.Hour), now, time.Hour)
	var week []store.Bucket
	if err == nil {
		week, err = b.store.Timeline(ctx, now.Add(-7*24*time.Hour), now, 24*time.Hour)
	}
	if err != nil {
		b.logger.Error("read the timeline of turns", "chat", chatID, "err", err)
		return
	}
	if !slices.ContainsFunc(week, func(b store.Bucket) bool { return len(b.Turns) > 0 }) {
		return // an empty chart says nothing the text did not
	}
	img, tallest, err := statsview.Chart(day, week)
	if err != nil {
		b.logger.Error("draw the chart of turns", "chat", chatID, "err", err)
		return
	}
	caption := fmt.Sprintf("Turns over time, now on the right. Top: the last 24 hours, an hour a bar (tallest: %d). "+
		"Bottom: the last 7 days, a day a bar (tallest: %d). Green: answered; red: failed; grey: stopped.", tallest[0], tallest[1])
	if err := b.tg.SendPhoto(ctx, chatID, img, "image/png", caption, 0); err != nil {
		b.logger.Error("send the chart of turns", "chat", chatID, "err", err)
	}
}

// sweepStats deletes the records past the retention, at most once per
// statsSweepEvery; last is when it last did.
func (b *Bot) sweepStats(ctx context.Context, now time.Time, last *time.Time) {
	if !last.IsZero() && now.Sub(*last) < statsSweepEvery {
		return
	}
	*last = now
	n, err := b.store.PruneStats(ctx, now.Add(-b.cfg.StatsRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		b.logger.Warn("sweep old statistics", "err", err)
	case n > 0:
		b.logger.Info("swept old statistics", "rows", n, "retention", b.cfg.StatsRetention)
	}
}
