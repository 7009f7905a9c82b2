package bot

import (
	"context"
	"net/url"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// looksLikeSignIn reports whether text is an address a sign-in's
// browser came back to mcpgram at (its callback path, with a state and
// a code).
func looksLikeSignIn(text string) bool {
	u, err := url.Parse(strings.TrimSpace(text))
	if err != nil || u.Path != mcpgram.CallbackPath {
		return false
	}
	q := u.Query()
	return q.Get("state") != "" && (q.Get("code") != "" || q.Get("error") != "")
}

// straySignIn takes a message that is a sign-in's address when no sign-in
// waits for it (its card closed, or none): it holds a sign-in's code, so
// it is deleted and never goes to the model. It reports whether m was one.
func (b *Bot) straySignIn(ctx context.Context, m *message) bool {
	if !looksLikeSignIn(m.Text) {
		return false
	}
	b.deleteMessage(ctx, m.Chat.ID, m.MessageID)
	b.say(ctx, m.at, "That looks like a sign-in address, but no sign-in of yours waits for it here, so nothing was done with it.")
	return true
}

// deleteMessage deletes a message of the chat that holds a secret, where
// Telegram lets the bot (in a group, only with the right to).
func (b *Bot) deleteMessage(ctx context.Context, chatID int64, msgID int) {
	if _, err := b.tg.Request(ctx, tgbotapi.NewDeleteMessage(chatID, msgID)); err != nil {
		b.logger.Info("could not delete a message holding a sign-in's code or a secret", "chat", chatID, "err", err)
	}
}

// signIn opens, for the admin who pressed a server's Sign in button on
// /servers at place at (checked by handleServerPress), the card of the
// operator's sign-in to it: the same card, redirect and paste-back as a
// user's connection, for every chat. Once signed in, the server is
// reconnected.
func (b *Bot) signIn(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, server string) {
	user := cq.From.ID
	key, err := b.conversation(ctx, at)
	if err != nil {
		b.logger.Warn("begin the operator's sign-in: which conversation?", "chat", at, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; please press again in a moment.", true)
		return
	}
	f, err := b.parts.SignIns.SignIn(ctx, caller(user, key), server, func(ctx context.Context, redirectURI, tag string) (string, string, error) {
		return b.hub.SignIn(ctx, server, redirectURI, tag)
	})
	if err != nil {
		b.logger.Warn("begin the operator's sign-in", "server", server, "err", err)
		b.tg.AnswerCallback(ctx, cq.ID, "Could not start the sign-in: the server's sign-in could not be reached or refused (the log says why).", true)
		return
	}
	b.tg.AnswerCallback(ctx, cq.ID, "", false)
	b.forms.Show(ctx, at, key, user, f)
	b.queue.Go(func(work context.Context) {
		// It waits on a person: it stops as shutdown begins, rather than
		// hold the shutdown for its grace.
		if b.stopping != nil {
			var cancel context.CancelFunc
			work, cancel = context.WithCancel(work)
			defer cancel()
			defer context.AfterFunc(b.stopping, cancel)()
		}
		b.awaitSignIn(work, at, f.ID)
	})
}

// awaitSignIn waits, on the instance that showed it, for the admin's
// sign-in card id to close, however it does: an address pasted here
// (which formText shows on the card), the browser back at PUBLIC_URL on
// any instance, Cancel, or the clock. It shows the outcome on the card,
// if not shown yet, and once signed in reconnects the server here (the
// other instances retry on their own). At shutdown it stops waiting.
func (b *Bot) awaitSignIn(ctx context.Context, at telegram.Place, id int64) {
	f, err := b.parts.SignIns.AwaitSignIn(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			b.logger.Error("wait for the operator's sign-in", "form", id, "err", err)
		}
		return
	}
	b.forms.Update(ctx, at.Chat, 0, f)
	if f.Outcome == agent.FormAccepted {
		b.signedIn(ctx, at, f)
	}
}

// signedIn reconnects the server an admin just signed in to from the
// chat.
func (b *Bot) signedIn(ctx context.Context, at telegram.Place, f *agent.Form) {
	if err := b.hub.Restart(ctx, f.Server); err != nil {
		b.logger.Warn("reconnect after the operator's sign-in", "server", f.Server, "err", err)
		b.say(ctx, at, "Signed in, but "+f.Server+" did not reconnect; /servers says why.")
		return
	}
	b.say(ctx, at, "Signed in; "+f.Server+" is reconnected.")
}
