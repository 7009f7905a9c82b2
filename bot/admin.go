package bot

import (
	"context"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// /servers and /stats are the admins' screens (packages servers and
// stats); the rights are checked here, at each command and each press.

func (b *Bot) showServers(ctx context.Context, m *message) {
	if !b.isAdmin(m.From.ID) {
		b.say(ctx, m.at, "Sorry, only admins can manage servers.")
		return
	}
	b.servers.Show(ctx, m.at)
}

func (b *Bot) showStats(ctx context.Context, m *message) {
	if !b.isAdmin(m.From.ID) {
		b.say(ctx, m.at, "Sorry, only admins can see the statistics.")
		return
	}
	b.stats.Show(ctx, m.at)
}

// handleServerPress acts on a /servers button at once, out of band.
func (b *Bot) handleServerPress(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, data callback.Data) {
	if !b.isAdmin(cq.From.ID) {
		b.logger.Warn("/servers button pressed by a non-admin; ignored", "user", cq.From.ID, "data", cq.Data)
		b.tg.AnswerCallback(ctx, cq.ID, "Only admins can manage servers.", true)
		return
	}
	if !b.allowPress(ctx, cq) {
		return
	}
	b.servers.Press(ctx, cq, at, data)
}
