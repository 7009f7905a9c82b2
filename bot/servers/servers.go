// Package servers is the /servers screen: every MCP server with its status,
// a page at a time, with Enable, Disable and Restart buttons. Who may see
// and press it is the bot's to check; the screen only shows and acts.
package servers

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/internal/lines"
)

// A Hub reports and manages the MCP servers; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
	SetEnabled(ctx context.Context, server string, enabled bool) error
	Restart(ctx context.Context, server string) error
}

// A Screen shows the servers of Hub through TG.
type Screen struct {
	Hub    Hub
	TG     *telegram.Client
	Logger *slog.Logger
	// SignIn answers a press of a server's Sign in button (shown where
	// the server needs the operator's sign-in), on a screen at place at:
	// the bot's to open the sign-in's card there.
	SignIn func(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, server string)
}

// perPage is how many servers a page lists, each with its buttons.
const perPage = 8

// ackAfter is how long a press waits before it is acknowledged anyway:
// starting a server can take a while.
const ackAfter = 3 * time.Second

func button(label string, act callback.Action, page int, name string) tgbotapi.InlineKeyboardButton {
	return tgbotapi.NewInlineKeyboardButtonData(label, callback.Data{Kind: callback.Servers, Action: act, Page: page, Server: name}.String())
}

// Find returns the server of cat that data's key names.
func Find(cat mcpgram.Catalog, data callback.Data) (mcpgram.ServerInfo, bool) {
	for _, s := range cat.Servers {
		if data.Names(s.Name) {
			return s, true
		}
	}
	return mcpgram.ServerInfo{}, false
}

// View renders one page of the screen.
func (sc *Screen) View(page int) (string, tgbotapi.InlineKeyboardMarkup) {
	cat := sc.Hub.Catalog()
	pages := max(1, (len(cat.Servers)+perPage-1)/perPage)
	page = min(max(page, 0), pages-1)
	var sb strings.Builder
	sb.WriteString("<b>MCP servers</b>")
	if pages > 1 {
		fmt.Fprintf(&sb, " (page %d of %d)", page+1, pages)
	}
	if len(cat.Servers) == 0 {
		sb.WriteString("\n\nNone configured.")
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	lo, hi := page*perPage, min((page+1)*perPage, len(cat.Servers))
	for _, s := range cat.Servers[lo:hi] {
		name := shown(s.Name)
		switch {
		case s.Status == mcpgram.StatusRunning:
			fmt.Fprintf(&sb, "\n\n🟢 <b>%s</b>: running, %s", name, render.Count(len(s.Tools), "tool"))
		case s.Down():
			// The same words as mcp list: the cause and its fix.
			fmt.Fprintf(&sb, "\n\n🔴 <b>%s</b>: %s", name, shown(render.Shorten(s.Problem(), 220)))
			if s.LastStderr != "" {
				sb.WriteString("\n<i>stderr:</i> <code>" + shown(render.Shorten(s.LastStderr, 200)) + "</code>")
			}
		case s.Status == mcpgram.StatusStarting:
			fmt.Fprintf(&sb, "\n\n🟡 <b>%s</b>: starting…", name)
		case s.Status == mcpgram.StatusDisabled:
			fmt.Fprintf(&sb, "\n\n⚪ <b>%s</b>: disabled", name)
		default:
			fmt.Fprintf(&sb, "\n\n⚫ <b>%s</b>: %s", name, shown(string(s.Status)))
		}
		sb.WriteString(sandboxNote(s))
		writeNotes(&sb, s.Notes)
		label := render.Shorten(render.Visible(s.Name), 24)
		var row []tgbotapi.InlineKeyboardButton
		if s.Status == mcpgram.StatusDisabled {
			row = append(row, button("Enable "+label, callback.Enable, page, s.Name))
		} else {
			row = append(row, button("Disable "+label, callback.Disable, page, s.Name))
		}
		if s.Status == mcpgram.StatusFailed {
			row = append(row, button("Restart "+label, callback.Restart, page, s.Name))
		}
		if s.SignIn && sc.SignIn != nil {
			row = append(row, button("🔑 Sign in "+label, callback.SignIn, page, s.Name))
		}
		rows = append(rows, row)
	}
	if pages > 1 {
		var nav []tgbotapi.InlineKeyboardButton
		if page > 0 {
			nav = append(nav, button("◀ Previous", callback.Page, page-1, ""))
		}
		if page < pages-1 {
			nav = append(nav, button("Next ▶", callback.Page, page+1, ""))
		}
		rows = append(rows, nav)
	}
	return sb.String(), tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// notesShown is how many notes of a server /servers shows; mcp list
// shows them all.
const notesShown = 2

// writeNotes adds what the hub refused or cut of a server's catalog.
func writeNotes(sb *strings.Builder, notes []string) {
	for i, n := range notes {
		if i == notesShown {
			fmt.Fprintf(sb, "\n⚠️ <i>and %d more (mcp list shows them all)</i>", len(notes)-notesShown)
			break
		}
		sb.WriteString("\n⚠️ <i>" + shown(render.Shorten(n, 160)) + "</i>")
	}
}

// shown is text a server or its settings gave, as HTML to show: escaped,
// and every hidden character visible.
func shown(s string) string { return render.Escape(render.Visible(s)) }

// Show sends the screen's first page to place to.
func (sc *Screen) Show(ctx context.Context, to telegram.Place) {
	html, kb := sc.View(0)
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := sc.TG.SendHTML(ctx, to, 0, html, markup); err != nil {
		sc.Logger.Error("send /servers", "chat", to, "err", err)
	}
}

// sandboxNote warns, on a line of its own, of a server that runs (or would
// run) outside a sandbox.
func sandboxNote(s mcpgram.ServerInfo) string {
	switch {
	case s.Sandbox != "" || s.NotSandboxed == "":
		return ""
	case s.Status == mcpgram.StatusFailed && strings.Contains(s.Error, s.NotSandboxed):
		return "" // the failure says it
	}
	return "\n⚠️ <i>Not sandboxed:</i> " + render.Escape(render.Shorten(s.NotSandboxed, 200))
}

// Press acts on a button of the screen, shown at place at, at once; the
// caller has checked that the presser may.
func (sc *Screen) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, data callback.Data) {
	if data.Action == callback.Page {
		sc.TG.AnswerCallback(ctx, cq.ID, "", false)
		sc.edit(ctx, cq, data.Page, "")
		return
	}
	s, ok := Find(sc.Hub.Catalog(), data)
	if !ok {
		sc.TG.AnswerCallback(ctx, cq.ID, "That server is no longer configured.", true)
		return
	}
	if data.Action == callback.SignIn {
		if sc.SignIn == nil {
			sc.TG.AnswerCallback(ctx, cq.ID, "Signing in is not offered here.", true)
			return
		}
		sc.SignIn(ctx, cq, at, s.Name)
		return
	}
	// Starting a server can take a while: past ackAfter the button
	// stops spinning and any failure shows in the message instead.
	var once sync.Once
	var early atomic.Bool
	timer := time.AfterFunc(ackAfter, func() {
		once.Do(func() { early.Store(true); sc.TG.AnswerCallback(ctx, cq.ID, "Working on it…", false) })
	})
	done, err := sc.act(ctx, data.Action, s.Name)
	timer.Stop()
	note := ""
	if err != nil {
		sc.Logger.Error("/servers action", "server", s.Name, "action", string(rune(data.Action)), "err", err)
		msg := render.Shorten(render.Visible(fmt.Sprintf("Could not do that to %s: %v", s.Name, err)), 190)
		once.Do(func() { sc.TG.AnswerCallback(ctx, cq.ID, msg, true) })
		if early.Load() {
			note = "⚠️ " + render.Escape(msg)
		}
	} else {
		once.Do(func() { sc.TG.AnswerCallback(ctx, cq.ID, render.Shorten(done, 190), false) })
	}
	sc.edit(ctx, cq, data.Page, note)
}

// act does act to the server, and says what it did.
func (sc *Screen) act(ctx context.Context, act callback.Action, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	shownName := render.Visible(name)
	switch act {
	case callback.Disable:
		return "Disabled " + shownName, sc.Hub.SetEnabled(ctx, name, false)
	case callback.Enable:
		return "Enabled " + shownName, sc.Hub.SetEnabled(ctx, name, true)
	}
	return "Restarted " + shownName, sc.Hub.Restart(ctx, name)
}

// edit redraws the screen's message on page, with an optional note.
func (sc *Screen) edit(ctx context.Context, cq *tgbotapi.CallbackQuery, page int, note string) {
	html, kb := sc.View(page)
	if note != "" {
		html += "\n\n" + note
	}
	if err := sc.TG.EditHTML(ctx, cq.Message.Chat.ID, cq.Message.MessageID, html, &kb); err != nil {
		sc.Logger.Error("edit /servers", "err", err)
	}
}

// ChatView is /tools: the servers and their tools as a chat sees them,
// off being those it turned off for itself, with a switch each.
func ChatView(cat mcpgram.Catalog, off []string) (string, tgbotapi.InlineKeyboardMarkup) {
	if len(cat.Servers) == 0 {
		return "No MCP servers are configured.", tgbotapi.InlineKeyboardMarkup{}
	}
	var sb strings.Builder
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, s := range cat.Servers {
		if i > 0 {
			sb.WriteString("\n\n")
		}
		name := shown(s.Name)
		label := render.Shorten(render.Visible(s.Name), 30)
		switch {
		case s.Status != mcpgram.StatusRunning:
			fmt.Fprintf(&sb, "<b>%s</b>: %s", name, shown(string(s.Status)))
			continue
		case slices.Contains(off, s.Name):
			fmt.Fprintf(&sb, "<b>%s</b>: off in this chat", name)
			rows = append(rows, chatButton("Turn on "+label+" here", callback.Enable, s.Name))
			continue
		}
		fmt.Fprintf(&sb, "<b>%s</b>", name)
		if s.Title != "" && s.Title != s.Name {
			// Beside the name, never in its place: the server chooses it.
			sb.WriteString(" (" + shown(render.Shorten(s.Title, 80)) + ")")
		}
		toolLines(&sb, s.Tools)
		rows = append(rows, chatButton("Turn off "+label+" here", callback.Disable, s.Name))
	}
	return sb.String(), tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}
}

func toolLines(sb *strings.Builder, tools []mcpgram.Tool) {
	for _, t := range tools {
		fmt.Fprintf(sb, "\n• <code>%s</code>", shown(t.Name))
		if t.Title != "" && t.Title != t.Name {
			// The server's display name reads better; the name is what
			// approvals and the model use.
			sb.WriteString(" <b>" + shown(t.Title) + "</b>")
		}
		if v := render.Visibility(t); v != "" {
			sb.WriteString(" <i>(" + v + ")</i>")
		}
		if d := lines.First(t.Description); d != "" {
			sb.WriteString(" – " + shown(render.Shorten(d, 100)))
		}
	}
}

func chatButton(label string, act callback.Action, server string) []tgbotapi.InlineKeyboardButton {
	return tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(label, callback.Data{Kind: callback.Chat, Action: act, Server: server}.String()))
}
