package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
)

const serversPerPage = 8

func serverButton(label string, act callback.Action, page int, name string) tgbotapi.InlineKeyboardButton {
	return tgbotapi.NewInlineKeyboardButtonData(label, callback.Data{Kind: callback.Servers, Action: act, Page: page, Server: name}.String())
}

func findServer(cat hub.Catalog, data callback.Data) (hub.ServerInfo, bool) {
	for _, s := range cat.Servers {
		if data.Names(s.Name) {
			return s, true
		}
	}
	return hub.ServerInfo{}, false
}

// serversView renders one page of /servers.
func (b *Bot) serversView(page int) (string, tgbotapi.InlineKeyboardMarkup) {
	cat := b.hub.Catalog()
	pages := max(1, (len(cat.Servers)+serversPerPage-1)/serversPerPage)
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
	lo, hi := page*serversPerPage, min((page+1)*serversPerPage, len(cat.Servers))
	for _, s := range cat.Servers[lo:hi] {
		name := render.Escape(s.Name)
		switch s.Status {
		case hub.StatusRunning:
			fmt.Fprintf(&sb, "\n\n🟢 <b>%s</b>: running, %s", name, toolCount(len(s.Tools)))
		case hub.StatusStarting:
			fmt.Fprintf(&sb, "\n\n🟡 <b>%s</b>: starting…", name)
		case hub.StatusDisabled:
			fmt.Fprintf(&sb, "\n\n⚪ <b>%s</b>: disabled", name)
		case hub.StatusFailed:
			fmt.Fprintf(&sb, "\n\n🔴 <b>%s</b>: failed", name)
			if s.Error != "" {
				sb.WriteString(": " + render.Escape(render.Shorten(s.Error, 200)))
			}
			if s.LastStderr != "" {
				sb.WriteString("\n<i>stderr:</i> <code>" + render.Escape(render.Shorten(s.LastStderr, 200)) + "</code>")
			}
		default:
			fmt.Fprintf(&sb, "\n\n⚫ <b>%s</b>: %s", name, render.Escape(string(s.Status)))
		}
		label := render.Shorten(s.Name, 24)
		var row []tgbotapi.InlineKeyboardButton
		if s.Status == hub.StatusDisabled {
			row = append(row, serverButton("Enable "+label, callback.Enable, page, s.Name))
		} else {
			row = append(row, serverButton("Disable "+label, callback.Disable, page, s.Name))
		}
		if s.Status == hub.StatusFailed {
			row = append(row, serverButton("Restart "+label, callback.Restart, page, s.Name))
		}
		rows = append(rows, row)
	}
	if pages > 1 {
		var nav []tgbotapi.InlineKeyboardButton
		if page > 0 {
			nav = append(nav, serverButton("◀ Previous", callback.Page, page-1, ""))
		}
		if page < pages-1 {
			nav = append(nav, serverButton("Next ▶", callback.Page, page+1, ""))
		}
		rows = append(rows, nav)
	}
	return sb.String(), tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}
}

func (b *Bot) showServers(ctx context.Context, chatID, user int64) {
	if !b.isAdmin(user) {
		b.say(ctx, chatID, "Sorry, only admins can manage servers.")
		return
	}
	html, kb := b.serversView(0)
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := b.tg.SendHTML(ctx, chatID, 0, html, markup); err != nil {
		b.logger.Error("send /servers", "chat", chatID, "err", err)
	}
}

// handleServerPress acts on a /servers button at once, out of band.
func (b *Bot) handleServerPress(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	if !b.isAdmin(cq.From.ID) {
		b.logger.Warn("/servers button pressed by a non-admin; ignored", "user", cq.From.ID, "data", cq.Data)
		b.tg.AnswerCallback(ctx, cq.ID, "Only admins can manage servers.", true)
		return
	}
	if !b.allowPress(ctx, cq) {
		return
	}
	if data.Action == callback.Page {
		b.tg.AnswerCallback(ctx, cq.ID, "", false)
		b.editServers(ctx, cq, data.Page, "")
		return
	}
	s, ok := findServer(b.hub.Catalog(), data)
	if !ok {
		b.tg.AnswerCallback(ctx, cq.ID, "That server is no longer configured.", true)
		return
	}
	// Starting a server can take a while: past pressAckAfter the button
	// stops spinning and any failure shows in the message instead.
	var once sync.Once
	var early atomic.Bool
	timer := time.AfterFunc(pressAckAfter, func() {
		once.Do(func() { early.Store(true); b.tg.AnswerCallback(ctx, cq.ID, "Working on it…", false) })
	})
	done, err := b.serverAction(ctx, data.Action, s.Name)
	timer.Stop()
	note := ""
	if err != nil {
		b.logger.Error("/servers action", "server", s.Name, "action", string(rune(data.Action)), "err", err)
		msg := render.Shorten(fmt.Sprintf("Could not do that to %s: %v", s.Name, err), 190)
		once.Do(func() { b.tg.AnswerCallback(ctx, cq.ID, msg, true) })
		if early.Load() {
			note = "⚠️ " + render.Escape(msg)
		}
	} else {
		once.Do(func() { b.tg.AnswerCallback(ctx, cq.ID, render.Shorten(done, 190), false) })
	}
	b.editServers(ctx, cq, data.Page, note)
}

// serverAction does act to the server, and says what it did.
func (b *Bot) serverAction(ctx context.Context, act callback.Action, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	switch act {
	case callback.Disable:
		return "Disabled " + name, b.hub.SetEnabled(ctx, name, false)
	case callback.Enable:
		return "Enabled " + name, b.hub.SetEnabled(ctx, name, true)
	}
	return "Restarted " + name, b.hub.Restart(ctx, name)
}

// editServers redraws the /servers message on page, with an optional note.
func (b *Bot) editServers(ctx context.Context, cq *tgbotapi.CallbackQuery, page int, note string) {
	html, kb := b.serversView(page)
	if note != "" {
		html += "\n\n" + note
	}
	if err := b.tg.EditHTML(ctx, cq.Message.Chat.ID, cq.Message.MessageID, html, &kb); err != nil {
		b.logger.Error("edit /servers", "err", err)
	}
}
