package reply

import (
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
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
func (r *Reply) lineLocked(n int) *toolLine {
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
func (r *Reply) progressLocked(reports []agent.CallProgress) bool {
	changed := false
	for _, p := range reports {
		l := r.lineLocked(p.Call)
		if l == nil || l.mark != markRunning {
			continue // it ended: its end says more
		}
		if text := render.Progress(p.Progress.Progress, p.Total, p.Message); text != l.progress {
			l.progress, changed = text, true
		}
	}
	return changed
}

// stopMarkup is the Stop button of the status message, or nil.
func (r *Reply) stopMarkup() *tgbotapi.InlineKeyboardMarkup {
	data := callback.Data{Kind: callback.Stop, Turn: r.stop}.String()
	if r.stop == "" || data == "" {
		return nil
	}
	m := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("⏹ Stop", data)))
	return &m
}
