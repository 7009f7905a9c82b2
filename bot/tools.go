package bot

import (
	"context"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/servers"
)

// /tools: the servers and their tools, with a button each to turn a
// server off (or back on) for this chat alone, within what the operator
// enabled. In a group only its administrators (or the bot's admins) may
// press them; in a private chat, its user.

// A serverSwitch keeps the servers a chat turned off; *agent.Agent is one.
// Like usageReporter, it is asked of the Agent by assertion.
type serverSwitch interface {
	ServersOff(ctx context.Context, chatID string) ([]string, error)
	SetServerOff(ctx context.Context, chatID, server string, off bool) error
}

func (b *Bot) showTools(ctx context.Context, chatID int64) {
	html, kb := b.toolsView(ctx, chatID)
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := b.tg.SendLong(ctx, chatID, 0, html, markup); err != nil {
		b.logger.Error("send /tools", "chat", chatID, "err", err)
	}
}

// toolsView lists the servers as chatID sees them, with their switches.
func (b *Bot) toolsView(ctx context.Context, chatID int64) (string, tgbotapi.InlineKeyboardMarkup) {
	sw, _ := b.agent.(serverSwitch)
	var off []string
	if sw != nil {
		var err error
		if off, err = sw.ServersOff(ctx, strconv.FormatInt(chatID, 10)); err != nil {
			b.logger.Error("read the chat's servers", "chat", chatID, "err", err)
		}
	}
	return servers.ChatView(b.hub.Catalog(), off, sw != nil)
}

// handleChatServerPress turns a server off or on for the chat, checking
// the presser's right at the press.
func (b *Bot) handleChatServerPress(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	chatID := cq.Message.Chat.ID
	sw, ok := b.agent.(serverSwitch)
	if !b.mayChangeChat(ctx, cq, "Only the group's administrators can turn servers off or on here.") {
		return
	}
	if !ok {
		b.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	s, found := b.servers.Find(data)
	if !found {
		b.tg.AnswerCallback(ctx, cq.ID, "That server is no longer configured.", true)
		return
	}
	off := data.Action == callback.Disable
	if err := sw.SetServerOff(ctx, strconv.FormatInt(chatID, 10), s.Name, off); err != nil {
		b.logger.Error("turn a server off or on for a chat", "chat", chatID, "server", s.Name, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
		return
	}
	ack := "Turned on " + render.Visible(s.Name) + " in this chat"
	if off {
		ack = "Turned off " + render.Visible(s.Name) + " in this chat"
	}
	b.tg.AnswerCallback(ctx, cq.ID, render.Shorten(ack, 190), false)
	html, kb := b.toolsView(ctx, chatID)
	if err := b.tg.EditHTML(ctx, chatID, cq.Message.MessageID, html, &kb); err != nil {
		b.logger.Debug("redraw /tools", "chat", chatID, "err", err)
	}
}
