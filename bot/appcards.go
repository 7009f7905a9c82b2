package bot

import (
	"context"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/bot/callback"
)

// AppApprovals is what sends the approval cards of the MCP Apps'
// requests (see apps.Host), or nil where the bot shows no apps.
func (b *Bot) AppApprovals() apps.Asker {
	if b.apps == nil { // never a nil *apps.Apps in the interface
		return nil
	}
	return b.apps
}

// handleAppPress answers a press of an app's approval card.
func (b *Bot) handleAppPress(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	if b.apps == nil {
		b.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	}
	b.apps.Press(ctx, cq, data)
}
