package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// Progress is a report as the status line shows it: "40%, 120 of
// 300 · indexing", "120 · indexing" without a total.
func Progress(progress, total float64, msg string) string {
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
		b.WriteString(Escape(Visible(msg)))
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

// Call names a call on its status line: the tool by its title where
// its server gives one (a title reads better than a name), else by its
// name, or the resource read; and the server, with its title beside its
// name.
func Call(cat mcpgram.Catalog, server, tool, uri string) string {
	on := " on <b>" + Escape(server) + "</b>"
	if title := serverTitle(cat, server); title != "" {
		on += " (" + Escape(Shorten(title, 80)) + ")"
	}
	if tool == "" && uri != "" {
		return "<code>" + Escape(Shorten(uri, 80)) + "</code>" + on
	}
	if title := toolTitle(cat, server, tool); title != "" {
		return Escape(title) + on
	}
	return "<code>" + Escape(tool) + "</code>" + on
}

// serverTitle is the title server gives itself, if it gives one other
// than its name: shown beside the name, never in its place, since the
// server chooses it.
func serverTitle(cat mcpgram.Catalog, server string) string {
	s, ok := cat.Server(server)
	if !ok || s.Title == "" || s.Title == server {
		return ""
	}
	return Visible(s.Title)
}

// toolTitle is the title the server gives tool, if it gives one other
// than its name.
func toolTitle(cat mcpgram.Catalog, server, tool string) string {
	s, ok := cat.Server(server)
	if !ok {
		return ""
	}
	t, ok := s.Tool(tool)
	if !ok || t.Title == "" || t.Title == tool {
		return ""
	}
	return Visible(t.Title)
}

// Visibility says, for a listing of tools, who t is not for under MCP
// Apps: "app only" for a tool that only its server's app may call, which
// the model is never shown; "hidden" for one whose visibility names
// neither the model nor an app; "" for a tool the model may call.
func Visibility(t mcpgram.Tool) string {
	switch {
	case t.VisibleTo(mcpgram.AudienceModel):
		return ""
	case t.VisibleTo(mcpgram.AudienceApp):
		return "app only"
	}
	return "hidden"
}
