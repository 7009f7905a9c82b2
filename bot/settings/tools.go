package settings

import (
	"context"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/servers"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// /tools: the servers and their tools, with a button each to turn a
// server off (or back on) for this chat alone, within what the operator
// enabled. In a group only its administrators (or the bot's admins) may
// press them; in a private chat, its user.

// ShowTools answers /tools, sent at place at: the switches are its
// chat's, whatever the topic.
func (sc *Screen) ShowTools(ctx context.Context, at telegram.Place) {
	html, kb := sc.toolsView(ctx, at.Chat)
	sc.send(ctx, at, html, kb, "/tools")
}

// toolsView lists the servers as chatID sees them, with their switches.
func (sc *Screen) toolsView(ctx context.Context, chatID int64) (string, tgbotapi.InlineKeyboardMarkup) {
	off, err := sc.agent.ServersOff(ctx, strconv.FormatInt(chatID, 10))
	if err != nil {
		sc.logger.Error("read the chat's servers", "chat", chatID, "err", err)
	}
	return servers.ChatView(sc.hub.Catalog(), off)
}

// PressTools turns a server off or on for the chat, checking the
// presser's right at the press; admin says the presser is an admin of
// the bot.
func (sc *Screen) PressTools(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data, admin bool) {
	chatID := cq.Message.Chat.ID
	if !sc.mayPress(ctx, cq, admin, "Only the group's administrators can turn servers off or on here.") {
		return
	}
	s, found := servers.Find(sc.hub.Catalog(), data)
	if !found {
		sc.tg.AnswerCallback(ctx, cq.ID, "That server is no longer configured.", true)
		return
	}
	off := data.Action == callback.Disable
	if err := sc.agent.SetServerOff(ctx, strconv.FormatInt(chatID, 10), s.Name, off); err != nil {
		sc.logger.Error("turn a server off or on for a chat", "chat", chatID, "server", s.Name, "err", err)
		sc.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
		return
	}
	ack := "Turned on " + render.Visible(s.Name) + " in this chat"
	if off {
		ack = "Turned off " + render.Visible(s.Name) + " in this chat"
	}
	sc.tg.AnswerCallback(ctx, cq.ID, render.Shorten(ack, 190), false)
	html, kb := sc.toolsView(ctx, chatID)
	if err := sc.tg.EditHTML(ctx, chatID, cq.Message.MessageID, html, &kb); err != nil {
		sc.logger.Debug("redraw /tools", "chat", chatID, "err", err)
	}
}
