package bot

import (
	"context"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

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

// toolWhat names a call on its status line (see render.Call).
func (b *Bot) toolWhat(server, tool, uri string) string {
	return render.Call(b.hub.Catalog(), server, tool, uri)
}
