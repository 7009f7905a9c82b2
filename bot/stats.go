package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
)

// /stats: the admins' look at the last 24 hours and 7 days, from what the
// store recorded (so it survives restarts and, on PostgreSQL, covers every
// instance), and the servers' health from the hub.

// A StatsStore reads the statistics of a window and sweeps old ones;
// *store.DB and *postgres.DB are. It is asked of the Store by assertion,
// so that stores without it (test fakes) still serve everything else.
type StatsStore interface {
	Stats(ctx context.Context, from, to time.Time, top int) (store.Stats, error)
	PruneStats(ctx context.Context, before time.Time) (int64, error)
	Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]store.Bucket, error)
}

// Defaults of the statistics.
const (
	// DefaultStatsRetention is how long the records of turns and model
	// calls are kept: /stats reads 7 days, the rest is a margin.
	DefaultStatsRetention = 30 * 24 * time.Hour
	// statsSweepEvery is how often records past the retention are deleted.
	statsSweepEvery = time.Hour
	// statsTopUsers and statsTopTools cap those lists, for a phone.
	statsTopUsers = 5
	statsTopTools = 10
)

func (b *Bot) showStats(ctx context.Context, chatID, user int64) {
	if !b.isAdmin(user) {
		b.say(ctx, chatID, "Sorry, only admins can see the statistics.")
		return
	}
	ss, ok := b.store.(StatsStore)
	if !ok {
		b.say(ctx, chatID, "Statistics are not recorded here.")
		return
	}
	now := time.Now()
	for _, w := range []struct {
		title string
		span  time.Duration
	}{{"Last 24 hours", 24 * time.Hour}, {"Last 7 days", 7 * 24 * time.Hour}} {
		st, err := ss.Stats(ctx, now.Add(-w.span), now, statsTopUsers)
		if err != nil {
			b.logger.Error("read statistics", "chat", chatID, "err", err)
			b.say(ctx, chatID, "Sorry, I could not read the statistics. Please try again.")
			return
		}
		b.say(ctx, chatID, statsText(w.title, st))
	}
	b.sendChart(ctx, ss, chatID, now)
	b.say(ctx, chatID, serversHealth(b.hub.Catalog()))
}

// sendChart sends the turns of the last 24 hours by hour and of the last
// 7 days by day as bars, when there were any.
func (b *Bot) sendChart(ctx context.Context, ss StatsStore, chatID int64, now time.Time) {
	day, err := ss.Timeline(ctx, now.Add(-24*time.Hour), now, time.Hour)
	var week []store.Bucket
	if err == nil {
		week, err = ss.Timeline(ctx, now.Add(-7*24*time.Hour), now, 24*time.Hour)
	}
	if err != nil {
		b.logger.Error("read the timeline of turns", "chat", chatID, "err", err)
		return
	}
	if !slices.ContainsFunc(week, func(b store.Bucket) bool { return len(b.Turns) > 0 }) {
		return // an empty chart says nothing the text did not
	}
	img, tallest, err := turnsChart(day, week)
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
	ss, ok := b.store.(StatsStore)
	if !ok || (!last.IsZero() && now.Sub(*last) < statsSweepEvery) {
		return
	}
	*last = now
	n, err := ss.PruneStats(ctx, now.Add(-b.cfg.StatsRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		b.logger.Warn("sweep old statistics", "err", err)
	case n > 0:
		b.logger.Info("swept old statistics", "rows", n, "retention", b.cfg.StatsRetention)
	}
}

// statsText is one window of /stats, in short lines for a phone.
func statsText(title string, s store.Stats) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "📊 <b>%s</b>\n", render.Escape(title))
	turns := store.Total(s.Turns)
	if turns == 0 && len(s.Models) == 0 && len(s.Tools) == 0 {
		sb.WriteString("Nothing happened.")
		return sb.String()
	}
	fmt.Fprintf(&sb, "\n<b>Turns</b>: %s\n", grouped(turns))
	if turns > 0 {
		sb.WriteString(counts(s.Turns) + "\n")
	}
	if n := store.Total(s.Errors); n > 0 {
		fmt.Fprintf(&sb, "<b>Errors</b>: %s\n%s\n", grouped(n), counts(s.Errors))
	}
	for _, m := range s.Models {
		fmt.Fprintf(&sb, "\n<b>Model</b> <code>%s</code>\n", render.Escape(m.Model))
		fmt.Fprintf(&sb, "%s calls", grouped(m.Calls))
		if n := store.Total(m.Failures); n > 0 {
			fmt.Fprintf(&sb, ", %s failed (%s)", grouped(n), counts(m.Failures))
		}
		fmt.Fprintf(&sb, "\nLatency p50 %s · p95 %s\n", latency(m.P50), latency(m.P95))
		if m.Blocks > 0 {
			fmt.Fprintf(&sb, "Format at first try: %s of %s (%s)\n", grouped(m.FirstTry), grouped(m.Blocks), percent(m.FirstTry, m.Blocks))
		}
		fmt.Fprintf(&sb, "Tokens: %s in · %s out\n", grouped(m.In), grouped(m.Out))
	}
	if len(s.Tools) > 0 {
		sb.WriteString("\n<b>Tools</b>\n")
		for i, t := range s.Tools {
			if i == statsTopTools {
				fmt.Fprintf(&sb, "… and %d more\n", len(s.Tools)-i)
				break
			}
			sb.WriteString(toolLine(t))
		}
	}
	if len(s.TopUsers) > 0 {
		sb.WriteString("\n<b>Top users by tokens</b>\n")
		for i, u := range s.TopUsers {
			fmt.Fprintf(&sb, "%d. <code>%s</code>: %s\n", i+1, render.Escape(u.UserID), grouped(u.Total()))
		}
	}
	return strings.TrimRight(sb.String(), "\n")
}

// toolLine is a tool's two lines: calls and failures, then latencies.
func toolLine(t store.ToolStats) string {
	var sb strings.Builder
	name := t.Server + "/" + t.Tool
	if t.Tool == "access_mcp_resource" {
		name = t.Server + " (resources)"
	}
	fmt.Fprintf(&sb, "• %s: %s", render.Escape(name), render.Count(int(t.Calls), "call"))
	if t.Calls > 0 {
		fmt.Fprintf(&sb, ", %s failed", percent(t.Failed, t.Calls))
	}
	if t.Denied > 0 {
		fmt.Fprintf(&sb, ", %s denied", grouped(t.Denied))
	}
	sb.WriteString("\n")
	if t.Calls > 0 {
		fmt.Fprintf(&sb, "  p50 %s · p95 %s\n", latency(t.P50), latency(t.P95))
	}
	return sb.String()
}

// serversHealth is the servers' state now, one line each.
func serversHealth(cat hub.Catalog) string {
	var sb strings.Builder
	sb.WriteString("🩺 <b>Servers now</b>\n")
	if len(cat.Servers) == 0 {
		sb.WriteString("No servers are configured.")
		return sb.String()
	}
	for _, s := range cat.Servers {
		icon := "⚠️"
		switch s.Status {
		case hub.StatusRunning:
			icon = "✅"
		case hub.StatusDisabled, hub.StatusStopped:
			icon = "⏸"
		case hub.StatusFailed:
			icon = "❌"
		}
		fmt.Fprintf(&sb, "%s %s: %s", icon, render.Escape(s.Name), s.Status)
		if s.Status == hub.StatusRunning {
			fmt.Fprintf(&sb, ", %s", render.Count(len(s.Tools), "tool"))
		}
		if s.Restarts > 0 {
			fmt.Fprintf(&sb, ", %s", render.Count(s.Restarts, "restart"))
		}
		if s.Error != "" && s.Status != hub.StatusRunning {
			fmt.Fprintf(&sb, "\n  <i>%s</i>", render.Escape(render.Shorten(s.Error, 80)))
		}
		sb.WriteString("\n")
	}
	return strings.TrimRight(sb.String(), "\n")
}

// counts is "answer 4 · error 1".
func counts(cs []store.Count) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		name := c.Name
		if name == "" {
			name = "other"
		}
		parts[i] = render.Escape(name) + " " + grouped(c.N)
	}
	return strings.Join(parts, " · ")
}

// percent is n of total in whole percent, rounded half up.
func percent(n, total int64) string {
	if total <= 0 {
		return "0%"
	}
	return strconv.FormatInt((200*n+total)/(2*total), 10) + "%"
}

// latency is a duration as a phone shows it: "12 ms", "3.4 s".
func latency(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
