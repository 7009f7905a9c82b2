package bot

import (
	"context"
	"fmt"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/render"
)

// AppMessages is what takes the MCP Apps' messages into their chats (see
// apps.Host), or nil where the bot shows no apps.
func (b *Bot) AppMessages() apps.Messenger {
	if b.apps == nil {
		return nil
	}
	return b
}

// AppContexts is what keeps the MCP Apps' context for their chats' next
// turns (see apps.Host), or nil where the bot shows no apps.
func (b *Bot) AppContexts() apps.Contexts {
	if b.apps == nil {
		return nil
	}
	return b
}

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

// AppMessage says m, an app's message, in its chat as its user's words
// (shown, marked as the app's), and runs the turn that answers it as a
// job of the queue, as a task's end is delivered: not through the
// inbox, whose items are Telegram's updates, numbered by Telegram.
// The user must still be allowed, within the rate of their messages.
func (b *Bot) AppMessage(ctx context.Context, m apps.Message) error {
	at, ok := chats.PlaceOf(m.Key)
	switch {
	case !ok:
		return fmt.Errorf("an app's message to chat %q, which the bot does not know", m.Key)
	case !b.isAllowed(m.User):
		return fmt.Errorf("an app's message from user %d, not allowed", m.User)
	}
	if ok, _ := b.allow(ctx, m.User); !ok {
		return apps.ErrLimited
	}
	title := render.Escape(render.Visible(render.Shorten(m.Title, 80)))
	sent, err := b.tg.SendLong(ctx, at, 0, "🧩 <i>From the app "+title+":</i>\n"+render.Escape(m.Text), nil)
	if err != nil {
		return fmt.Errorf("show an app's message: %w", err)
	}
	replyTo := 0
	if at.Chat != m.User {
		replyTo = sent.MessageID // in a group, the answer quotes it
	}
	req := agent.Request{Caller: caller(m.User, m.Key), Text: b.withAppContext(m.Key, "(from the app "+m.Title+") "+m.Text),
		Exempt: b.isAdmin(m.User), TurnID: agent.NewTurnID(), ReplyTo: int64(sent.MessageID)}
	b.queue.Go(func(work context.Context) {
		if err := b.runTurn(work, at, m.Key, m.User, replyTo, req, nil); err != nil && work.Err() == nil {
			b.logger.Warn("the turn of an app's message", "chat", at, "err", err)
		}
	})
	return nil
}
