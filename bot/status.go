package bot

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// The status message: one line per tool call of the turn, edited as the
// calls start, report progress and end, with a Stop button while the
// turn runs. Progress comes from the agent at most once a
// ProgressInterval for the whole turn, so a server's flood of reports
// costs one edit an interval; an edit that would change nothing is not
// made.

// markRunning marks the line of a call in flight.
const markRunning = "⏳"

// A toolLine is one call's line in the status message.
type toolLine struct {
	call     int    // the agent's number of the call (agent.Event.Call)
	what     string // HTML: the tool (or resource) and its server
	mark     string // markRunning, ✅ or ⚠️
	took     string // " · 1.2s" once it ended
	progress string // HTML: the last progress it reported, while running
}

// statusText is the status message of lines: the last one running, when
// it has reported nothing, says "Calling"; final leaves that out.
func statusText(lines []toolLine, final bool) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case l.mark != markRunning:
			out[i] = l.mark + " " + l.what + l.took
		case final:
			out[i] = markRunning + " " + l.what
		case l.progress != "":
			out[i] = markRunning + " " + l.what + ": " + l.progress
		case i == len(lines)-1:
			out[i] = markRunning + " Calling " + l.what + "…"
		default:
			out[i] = markRunning + " " + l.what
		}
	}
	return strings.Join(out, "\n")
}

// lineLocked is the line of call n: the last running one when n is 0
// (an event that does not say).
func (r *reply) lineLocked(n int) *toolLine {
	for i := len(r.tools) - 1; i >= 0; i-- {
		l := &r.tools[i]
		if (n != 0 && l.call == n) || (n == 0 && l.mark == markRunning) {
			return l
		}
	}
	return nil
}

// progressLocked shows reports on the lines of their calls still
// running, and says whether a line changed.
func (r *reply) progressLocked(reports []agent.CallProgress) bool {
	changed := false
	for _, p := range reports {
		l := r.lineLocked(p.Call)
		if l == nil || l.mark != markRunning {
			continue // it ended: its end says more
		}
		if text := progressText(p.Progress.Progress, p.Total, p.Message); text != l.progress {
			l.progress, changed = text, true
		}
	}
	return changed
}

// progressText is a report as the status line shows it: "40%, 120 of
// 300 · indexing", "120 · indexing" without a total.
func progressText(progress, total float64, msg string) string {
	var b strings.Builder
	if total > 0 {
		pct := math.Floor(100 * progress / total)
		pct = max(0, min(100, pct))
		fmt.Fprintf(&b, "%d%%, %s of %s", int(pct), number(progress), number(total))
	} else {
		b.WriteString(number(progress))
	}
	if msg != "" {
		b.WriteString(" · ")
		b.WriteString(render.Escape(render.Visible(msg)))
	}
	return b.String()
}

// number writes a server's number briefly: 120, 0.5, 1.2e+20.
func number(v float64) string {
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// stopMarkup is the Stop button of the status message, or nil.
func (r *reply) stopMarkup() *tgbotapi.InlineKeyboardMarkup {
	data := callback.Data{Kind: callback.Stop, Turn: r.stop}.String()
	if r.stop == "" || data == "" {
		return nil
	}
	m := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("⏹ Stop", data)))
	return &m
}

// toolWhat names a call on its status line: the tool by its title where
// its server gives one (a title reads better than a name), else by its
// name, or the resource read; and the server, with its title beside its
// name.
func (b *Bot) toolWhat(server, tool, uri string) string {
	on := " on <b>" + render.Escape(server) + "</b>"
	if title := b.serverTitle(server); title != "" {
		on += " (" + render.Escape(render.Shorten(title, 80)) + ")"
	}
	if tool == "" && uri != "" {
		return "<code>" + render.Escape(render.Shorten(uri, 80)) + "</code>" + on
	}
	if title := b.toolTitle(server, tool); title != "" {
		return render.Escape(title) + on
	}
	return "<code>" + render.Escape(tool) + "</code>" + on
}

// serverTitle is the title server gives itself, if it gives one other
// than its name: shown beside the name, never in its place, since the
// server chooses it.
func (b *Bot) serverTitle(server string) string {
	s, ok := b.hub.Catalog().Server(server)
	if !ok || s.Title == "" || s.Title == server {
		return ""
	}
	return render.Visible(s.Title)
}

// toolTitle is the title the server gives tool, if it gives one other
// than its name.
func (b *Bot) toolTitle(server, tool string) string {
	s, ok := b.hub.Catalog().Server(server)
	if !ok {
		return ""
	}
	t, ok := s.Tool(tool)
	if !ok || t.Title == "" || t.Title == tool {
		return ""
	}
	return render.Visible(t.Title)
}

// handleStopPress stops the turn a status message's Stop button, at
// place at, names, if it is still running here and the presser is its
// user: in a group, one member must not stop another's request. The
// press reaches the instance running the turn as any press of the chat
// does (its lease).
func (b *Bot) handleStopPress(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, data callback.Data) {
	user := cq.From.ID
	b.mu.Lock()
	t := b.turns[at.String()]
	b.mu.Unlock()
	switch {
	case t == nil || t.id != data.Turn:
		b.tg.AnswerCallback(ctx, cq.ID, "This request has already finished.", false)
	case t.owner != user:
		b.tg.AnswerCallback(ctx, cq.ID, "Only the person who asked can stop this request.", true)
	default:
		t.cancel(agent.ErrStopped)
		b.tg.AnswerCallback(ctx, cq.ID, "Stopping…", false)
	}
}
