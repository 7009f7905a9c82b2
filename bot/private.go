package bot

import (
	"context"

	"github.com/mcpgram/mcpgram/bot/commands"
)

// A group's form or sign-in is answered in its user's private chat (see
// package connect): the link on the group's card sends /start with the
// form's id.

// start answers /start: the greeting, or, with a deep link's payload,
// what the link asks.
func (b *Bot) start(ctx context.Context, m *message) {
	if payload := m.CommandArguments(); payload != "" {
		b.signIns.OpenPrivately(ctx, m.at, m.key, m.From.ID, m.Chat.IsPrivate(), payload)
		return
	}
	b.say(ctx, m.at, commands.Greeting(b.hub.Catalog(), m.From.ID))
}
