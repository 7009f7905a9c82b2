package bot

import (
	"context"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
)

// handlePress handles a follow-up option or approval button, in the
// chat's lane: the press starts a turn (see cards.Deck.Press).
func (b *Bot) handlePress(ctx context.Context, q *query, data callback.Data) {
	if !b.admitPress(ctx, q.CallbackQuery) {
		return
	}
	b.cards.Press(ctx, q.CallbackQuery, q.at, q.key, data, func(req agent.Request, onFirst func()) error {
		return b.runTurn(ctx, q.at, q.key, q.From.ID, 0, req, onFirst)
	})
}
