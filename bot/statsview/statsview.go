// Package statsview draws /stats for a phone: a window of the store's
// statistics and the servers' health as Telegram HTML in short lines, and
// turns over time as a chart. It is pure: numbers in, text and PNG out.
package statsview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/store"
)

// topTools caps the tools a window lists, for a phone; topFound the
// tools its searches found.
const (
	topTools = 10
	topFound = 5
)

// Window is one window of /stats under its title, in short lines for a
// phone, as Telegram HTML.
func Window(title string, s store.Stats) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "📊 <b>%s</b>\n", render.Escape(title))
	turns := store.Total(s.Turns)
	if turns == 0 && len(s.Models) == 0 && len(s.Tools) == 0 && len(s.Tasks.Outcomes) == 0 {
		sb.WriteString("Nothing happened.")
		return sb.String()
	}
	fmt.Fprintf(&sb, "\n<b>Turns</b>: %s\n", render.Grouped(turns))
	if turns > 0 {
		sb.WriteString(counts(s.Turns) + "\n")
	}
	if n := store.Total(s.Errors); n > 0 {
		fmt.Fprintf(&sb, "<b>Errors</b>: %s\n%s\n", render.Grouped(n), counts(s.Errors))
	}
	for _, m := range s.Models {
		fmt.Fprintf(&sb, "\n<b>Model</b> <code>%s</code>\n", render.Escape(m.Model))
		fmt.Fprintf(&sb, "%s calls", render.Grouped(m.Calls))
		if n := store.Total(m.Failures); n > 0 {
			fmt.Fprintf(&sb, ", %s failed (%s)", render.Grouped(n), counts(m.Failures))
		}
		fmt.Fprintf(&sb, "\nLatency p50 %s · p95 %s\n", latency(m.P50), latency(m.P95))
		if m.Blocks > 0 {
			fmt.Fprintf(&sb, "Format at first try: %s of %s (%s)\n", render.Grouped(m.FirstTry), render.Grouped(m.Blocks), percent(m.FirstTry, m.Blocks))
		}
		fmt.Fprintf(&sb, "Tokens: %s in · %s out\n", render.Grouped(m.In), render.Grouped(m.Out))
	}
	if len(s.Tools) > 0 {
		sb.WriteString("\n<b>Tools</b>\n")
		for i, t := range s.Tools {
			if i == topTools {
				fmt.Fprintf(&sb, "… and %d more\n", len(s.Tools)-i)
				break
			}
			sb.WriteString(toolLine(t))
		}
	}
	if s.Search.Searches > 0 {
		sb.WriteString(search(s.Search))
	}
	if n := store.Total(s.Tasks.Outcomes); n > 0 {
		fmt.Fprintf(&sb, "\n<b>Background calls</b>: %s\n%s\n", render.Grouped(n), counts(s.Tasks.Outcomes))
		if s.Tasks.P95 > 0 {
			fmt.Fprintf(&sb, "Ran p50 %s · p95 %s\n", span(s.Tasks.P50), span(s.Tasks.P95))
		}
	}
	if len(s.TopUsers) > 0 {
		sb.WriteString("\n<b>Top users by tokens</b>\n")
		for i, u := range s.TopUsers {
			fmt.Fprintf(&sb, "%d. <code>%s</code>: %s\n", i+1, render.Escape(u.UserID), render.Grouped(u.Total()))
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
		fmt.Fprintf(&sb, ", %s denied", render.Grouped(t.Denied))
	}
	sb.WriteString("\n")
	if t.Calls > 0 {
		fmt.Fprintf(&sb, "  p50 %s · p95 %s\n", latency(t.P50), latency(t.P95))
	}
	return sb.String()
}

// search is the window's searches for tools: how many, how many found
// nothing, how many the model followed by calling a tool they found, and
// the tools they found most, each with how often it was then called.
func search(s store.SearchStats) string {
	var sb strings.Builder
	sb.WriteString("\n<b>Tool search</b>\n")
	if s.Searches == 1 {
		sb.WriteString("1 search")
	} else {
		sb.WriteString(render.Grouped(s.Searches) + " searches")
	}
	if s.Empty > 0 {
		fmt.Fprintf(&sb, ", %s found nothing", render.Grouped(s.Empty))
	}
	fmt.Fprintf(&sb, "\nThen called a tool found: %s (%s)\n", render.Grouped(s.Followed), percent(s.Followed, s.Searches))
	for i, t := range s.Tools {
		if i == topFound {
			fmt.Fprintf(&sb, "… and %d more found\n", len(s.Tools)-i)
			break
		}
		fmt.Fprintf(&sb, "• %s: found %s, called %s\n", render.Escape(t.Server+"/"+t.Tool), render.Grouped(t.Found), render.Grouped(t.Called))
	}
	return sb.String()
}

// Servers is the servers' state now, one line each, as Telegram HTML.
func Servers(cat mcpgram.Catalog) string {
	var sb strings.Builder
	sb.WriteString("🩺 <b>Servers now</b>\n")
	if len(cat.Servers) == 0 {
		sb.WriteString("No servers are configured.")
		return sb.String()
	}
	for _, s := range cat.Servers {
		icon := "⚠️"
		switch s.Status {
		case mcpgram.StatusRunning:
			icon = "✅"
		case mcpgram.StatusDisabled, mcpgram.StatusStopped:
			icon = "⏸"
		case mcpgram.StatusFailed:
			icon = "❌"
		}
		fmt.Fprintf(&sb, "%s %s: %s", icon, render.Escape(s.Name), s.Status)
		if s.Status == mcpgram.StatusRunning {
			fmt.Fprintf(&sb, ", %s", render.Count(len(s.Tools), "tool"))
		}
		if s.Restarts > 0 {
			fmt.Fprintf(&sb, ", %s", render.Count(s.Restarts, "restart"))
		}
		if s.Error != "" && s.Status != mcpgram.StatusRunning {
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
		parts[i] = render.Escape(name) + " " + render.Grouped(c.N)
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

// span is a duration that may be long, as a phone shows it: "3.4 s",
// "12 min", "2.5 h".
func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return latency(d)
	case d < time.Hour:
		return strconv.FormatInt(int64(d/time.Minute), 10) + " min"
	}
	return strconv.FormatFloat(d.Hours(), 'f', 1, 64) + " h"
}

// latency is a duration as a phone shows it: "12 ms", "3.4 s".
func latency(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}
