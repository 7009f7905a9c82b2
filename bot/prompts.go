package bot

import (
	"context"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// The servers' prompts users choose (see package prompts): the bot
// checks who may press, and runs what they send as a turn.

// handlePromptPress handles a button of a prompt's form, in the chat's
// lane, from a user who may use the bot (see prompts.Press).
func (b *Bot) handlePromptPress(ctx context.Context, q *query, data callback.Data) {
	if !b.admitPress(ctx, q.CallbackQuery) {
		return
	}
	b.prompts.Press(ctx, q.CallbackQuery, q.at, q.key, data)
}

// runPrompt runs a prompt user sent as their turn (see prompts.Options.Run).
func (b *Bot) runPrompt(ctx context.Context, at telegram.Place, key string, user int64, req agent.Request) {
	req.Exempt = b.isAdmin(user)
	b.runTurn(ctx, at, key, user, 0, req, nil)
}
