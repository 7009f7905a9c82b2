package bot

import (
	"context"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
)

// /connections (package connections) shows a user their own sign-ins,
// and an admin the operator's too; the rights are checked here, at the
// command and at each press. A user's sign-ins are theirs alone: in a
// group the command lists nothing, and a press is taken only in a private
// chat, from the user whose sign-in it names (or, for the operator's, an
// admin).

func (b *Bot) showConnections(ctx context.Context, m *message) {
	switch {
	case !m.Chat.IsPrivate():
		b.say(ctx, m.at, "Your connections are yours alone: send /connections to me in a private chat.")
	case b.conns == nil:
		b.say(ctx, m.at, "No server here takes a sign-in, so there are no connections.")
	default:
		b.conns.Show(ctx, m.at, m.From.ID, b.isAdmin(m.From.ID))
	}
}

// handleDisconnectPress acts on a Disconnect button, out of band.
func (b *Bot) handleDisconnectPress(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	user := cq.From.ID
	if !b.admitPress(ctx, cq) {
		return
	}
	var refusal string
	switch {
	case b.conns == nil:
		refusal = "There are no connections here."
	case !cq.Message.Chat.IsPrivate():
		refusal = "Connections are managed in a private chat with me: send /connections there."
	case data.Owner == 0 && !b.isAdmin(user):
		refusal = "Only admins can sign everyone out of a server."
	case data.Owner != 0 && data.Owner != user:
		refusal = "This is someone else's connection; only they can disconnect it."
	}
	if refusal != "" {
		b.logger.Warn("Disconnect button refused", "user", user, "data", cq.Data, "why", refusal)
		b.tg.AnswerCallback(ctx, cq.ID, refusal, true)
		return
	}
	b.conns.Press(ctx, cq, data, user, b.isAdmin(user))
}
