// What the apps say in their chats: an app's message, shown as its user's
// words and answered by a turn, and the context an app keeps for its
// chat's next turn. Who may speak, how fast, and the turn itself are the
// bot's, asked through Chats.

package apps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// Chats is what the apps' words in their chats ask of the bot, which
// gives it (see bot.New).
type Chats struct {
	// Allowed reports whether user may use the bot; Admin, whether they
	// are one of its admins.
	Allowed, Admin func(user int64) bool
	// Allow reports whether user may send one more message now, within
	// their rate of messages.
	Allow func(ctx context.Context, user int64) bool
	// Turn runs req's turn in conversation key for user, answered at
	// place at (quoting message replyTo, 0: none), as a job of the bot's
	// queue.
	Turn func(at telegram.Place, key string, user int64, replyTo int, req agent.Request)
}

// AppMessage says m, an app's message, in its chat as its user's words
// (shown, marked as the app's), and has the bot run the turn that
// answers it as a job of its queue, as a task's end is delivered: not
// through the inbox, whose items are Telegram's updates, numbered by
// Telegram. The user must still be allowed, within the rate of their
// messages.
func (a *Apps) AppMessage(ctx context.Context, m Message) error {
	c := a.opts.Chats
	at, ok := chats.PlaceOf(m.Key)
	switch {
	case !ok:
		return fmt.Errorf("an app's message to chat %q, which the bot does not know", m.Key)
	case !c.Allowed(m.User):
		return fmt.Errorf("an app's message from user %d, not allowed", m.User)
	}
	if !c.Allow(ctx, m.User) {
		return ErrLimited
	}
	title := render.Escape(render.Visible(render.Shorten(m.Title, 80)))
	sent, err := a.tg.SendLong(ctx, at, 0, "🧩 <i>From the app "+title+":</i>\n"+render.Escape(m.Text), nil)
	if err != nil {
		return fmt.Errorf("show an app's message: %w", err)
	}
	replyTo := 0
	if at.Chat != m.User {
		replyTo = sent.MessageID // in a group, the answer quotes it
	}
	req := agent.Request{
		Caller: mcpgram.Caller{UserID: strconv.FormatInt(m.User, 10), ChatID: m.Key},
		Text:   a.WithContext(ctx, m.Key, "(from the app "+m.Title+") "+m.Text),
		Exempt: c.Admin(m.User), TurnID: agent.NewTurnID(), ReplyTo: int64(sent.MessageID),
	}
	c.Turn(at, m.Key, m.User, replyTo, req)
	return nil
}

// SetAppContext keeps m, an app's context, for the next turn of its
// conversation, in place of what was kept there; an empty one clears it.
// It is kept in the store, so that the turn finds it on whichever
// instance runs it, until ViewTTL has passed.
func (a *Apps) SetAppContext(ctx context.Context, m Message) error {
	if !a.opts.Chats.Allowed(m.User) {
		return fmt.Errorf("an app's context from user %d, not allowed", m.User)
	}
	if len(m.Text) > MaxContext {
		return fmt.Errorf("an app's context of %d bytes", len(m.Text))
	}
	return a.store.PutAppContext(ctx, store.AppContext{ChatID: m.Key, UserID: strconv.FormatInt(m.User, 10),
		Title: m.Title, Text: m.Text, ExpiresAt: time.Now().Add(ViewTTL)})
}

// WithContext returns text, the words of a turn in conversation key,
// after the context an app kept for it, if any, which it takes. Where
// the bot shows no apps (a nil *Apps), it is text itself; a context the
// store cannot give is logged, and the turn goes on without it.
func (a *Apps) WithContext(ctx context.Context, key, text string) string {
	if a == nil {
		return text
	}
	c, err := a.store.TakeAppContext(ctx, key, time.Now())
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			a.opts.Logger.Warn("take an app's context for a turn", "chat", key, "err", err)
		}
		return text
	}
	return "[Context from the app " + c.Title + ", given for this message:\n" + c.Text + "]\n\n" + text
}
