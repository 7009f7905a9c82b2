// Package stats is /stats: the admins' look at the last 24 hours and 7
// days, from what the store recorded (so it survives restarts and, on
// PostgreSQL, covers every instance), with the turns over time as a chart,
// and the servers' health from the hub. Package statsview draws it; who
// may see it is the bot's to check.
package stats

import (
	"context"
	"log/slog"
	"slices"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/statsview"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// A Store reads the records of turns (see store.Statistics); *sqlite.DB
// and *postgres.DB are Stores.
type Store interface {
	Stats(ctx context.Context, from, to time.Time, top int) (store.Stats, error)
	Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]store.Bucket, error)
}

// A Hub reports the MCP servers; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
}

// Telegram is what the screen sends through; *telegram.Client is one.
type Telegram interface {
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	SendPhoto(ctx context.Context, to telegram.Place, data []byte, mimeType, caption string, i int) error
}

// Options are a Screen's optional settings.
type Options struct {
	Logger *slog.Logger
}

// A Screen answers /stats.
type Screen struct {
	store  Store
	hub    Hub
	tg     Telegram
	logger *slog.Logger
}

// New returns a Screen reading the statistics from s and the servers
// from h, and answering through tg.
func New(s Store, h Hub, tg Telegram, opts Options) *Screen {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Screen{store: s, hub: h, tg: tg, logger: opts.Logger}
}

// topUsers caps that list, for a phone.
const topUsers = 5

// Show sends the statistics to place to: a window of 24 hours, one of 7
// days, the chart when there were turns, and the servers now.
func (sc *Screen) Show(ctx context.Context, to telegram.Place) {
	now := time.Now()
	for _, w := range []struct {
		title string
		span  time.Duration
	}{{"Last 24 hours", 24 * time.Hour}, {"Last 7 days", 7 * 24 * time.Hour}} {
		st, err := sc.store.Stats(ctx, now.Add(-w.span), now, topUsers)
		if err != nil {
			sc.logger.Error("read statistics", "chat", to, "err", err)
			sc.say(ctx, to, "Sorry, I could not read the statistics. Please try again.")
			return
		}
		sc.say(ctx, to, statsview.Window(w.title, st))
	}
	sc.sendChart(ctx, to, now)
	sc.say(ctx, to, statsview.Servers(sc.hub.Catalog()))
}

func (sc *Screen) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := sc.tg.SendLong(ctx, to, 0, html, nil); err != nil {
		sc.logger.Error("send message", "chat", to, "err", err)
	}
}

// sendChart sends the turns of the last 24 hours by hour and of the last
// 7 days by day as bars, when there were any.
func (sc *Screen) sendChart(ctx context.Context, to telegram.Place, now time.Time) {
	day, err := sc.store.Timeline(ctx, now.Add(-24*time.Hour), now, time.Hour)
	var week []store.Bucket
	if err == nil {
		week, err = sc.store.Timeline(ctx, now.Add(-7*24*time.Hour), now, 24*time.Hour)
	}
	if err != nil {
		sc.logger.Error("read the timeline of turns", "chat", to, "err", err)
		return
	}
	if !slices.ContainsFunc(week, func(b store.Bucket) bool { return len(b.Turns) > 0 }) {
		return // an empty chart says nothing the text did not
	}
	img, _, err := statsview.Chart(day, week)
	if err != nil {
		sc.logger.Error("draw the chart of turns", "chat", to, "err", err)
		return
	}
	caption := "Turns over time: the last 24 hours and the last 7 days, now on the right."
	if err := sc.tg.SendPhoto(ctx, to, img, "image/png", caption, 0); err != nil {
		sc.logger.Error("send the chart of turns", "chat", to, "err", err)
	}
}
