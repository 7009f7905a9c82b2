package bot

import (
	"context"
	"errors"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/chats"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
)

// Forum topics. In a group with topics (a forum) a message written in a
// topic names it, and everything the bot sends for that message goes to
// it (see telegram.Place). Each topic is a conversation of its own, with
// its own history, /model, /system, /reset, questions, forms and order
// of turns (a dispatch lane per topic), unless the group chose with
// /topics to share one conversation among all its topics: its /tools
// switches and command menus are the group's, as Telegram's menus are.
// A conversation is named by its key (see package chats).

// A message is an update's message as the bot handles it: the library's,
// with the place it was written in and the key of its conversation,
// which Bot API 5.5's type cannot hold.
type message struct {
	*tgbotapi.Message
	at  telegram.Place
	key string
}

// A query is a button press as the bot handles it: the library's, with
// the place and conversation of the message whose button was pressed.
type query struct {
	*tgbotapi.CallbackQuery
	at  telegram.Place
	key string
}

// conversation is the key of the conversation of place at: the chat's
// own, or, for a topic, the topic's unless its group shares one
// conversation among its topics (/topics).
func (b *Bot) conversation(ctx context.Context, at telegram.Place) (string, error) {
	if at.Topic == 0 {
		return chats.Key(at.Chat), nil
	}
	shared, err := b.store.ChatTopicsShared(ctx, chats.Key(at.Chat))
	if err != nil {
		return "", err
	}
	if shared {
		return chats.Key(at.Chat), nil
	}
	return at.String(), nil
}

// onMessage is the run of a job that handles m, written at place at,
// once its conversation is known; an update whose conversation cannot be
// known now runs again later (see unknown), its sender told so once, as
// for a turn (msgLater).
func (b *Bot) onMessage(m *tgbotapi.Message, at telegram.Place, handle func(context.Context, *message)) func(context.Context) {
	return func(ctx context.Context) {
		key, err := b.conversation(ctx, at)
		if err != nil {
			b.unknown(ctx, at, err)
			if errors.Is(err, store.ErrUnavailable) && dispatch.Attempt(ctx) == 1 && b.forMe(m) {
				b.say(ctx, at, msgLater)
			}
			return
		}
		handle(ctx, &message{Message: m, at: at, key: key})
	}
}

// forMe reports whether m, whose conversation is not known yet, is one
// the bot would answer: a command or a message addressed to it, from a
// user allowed.
func (b *Bot) forMe(m *tgbotapi.Message) bool {
	return m.From != nil && b.isAllowed(m.From.ID) && (m.Chat.IsPrivate() || m.IsCommand() || b.addressed(m))
}

// onQuery is onMessage for a press on a message at place at.
func (b *Bot) onQuery(cq *tgbotapi.CallbackQuery, at telegram.Place, handle func(context.Context, *query)) func(context.Context) {
	return func(ctx context.Context) {
		key, err := b.conversation(ctx, at)
		if err != nil {
			b.unknown(ctx, at, err)
			b.tg.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; please press again in a moment.", false)
			return
		}
		handle(ctx, &query{CallbackQuery: cq, at: at, key: key})
	}
}

// unknown leaves an update whose conversation could not be read in the
// inbox, to run again once the database answers, as a turn that cannot
// reach it does (see later).
func (b *Bot) unknown(ctx context.Context, at telegram.Place, err error) {
	if errors.Is(err, store.ErrUnavailable) {
		dispatch.RunAgain(ctx)
	}
	b.logger.Warn("cannot tell which conversation a topic's message belongs to; it runs again once the database answers", "chat", at, "err", err)
}

// waiting reports whether a call running here waits for a form of user
// in the conversation of place at: its own, or, as the group may share
// one among its topics, the chat's.
func (b *Bot) waiting(at telegram.Place, user int64) bool {
	u := strconv.FormatInt(user, 10)
	return b.parts.Forms.Waiting(chats.Key(at.Chat), u) || (at.Topic != 0 && b.parts.Forms.Waiting(at.String(), u))
}
