package bot

import (
	"context"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
)

// signIn opens, for the admin who pressed a server's Sign in button on
// /servers at place at (checked by handleServerPress), the card of the
// operator's sign-in to it (see connect.SignIn), and waits for it here.
// Once signed in, the server is reconnected.
func (b *Bot) signIn(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, server string) {
	key, err := b.conversation(ctx, at)
	if err != nil {
		b.logger.Warn("begin the operator's sign-in: which conversation?", "chat", at, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; please press again in a moment.", true)
		return
	}
	id, ok := b.signIns.SignIn(ctx, cq, at, key, server)
	if !ok {
		return
	}
	b.queue.Go(func(work context.Context) {
		// It waits on a person: it stops as shutdown begins, rather than
		// hold the shutdown for its grace.
		if b.stopping != nil {
			var cancel context.CancelFunc
			work, cancel = context.WithCancel(work)
			defer cancel()
			defer context.AfterFunc(b.stopping, cancel)()
		}
		b.signIns.Await(work, at, id)
	})
}
