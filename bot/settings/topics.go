package settings

import (
	"context"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
)

// /topics: in a group with topics (a forum), whether each topic is a
// conversation of its own (the default) or all share one, the General
// topic's. Answers go to the topic a message came from either way. A
// topic's own conversation stays stored while they share one, and comes
// back when they are separate again. In a group only its administrators
// (or the bot's admins) change it; in a private chat with topics, its
// user.

// Topics answers /topics, m, sent at place at: without arguments it says
// how the chat keeps its topics' conversations; "shared" or "separate"
// change that, if the sender may. admin says the sender is an admin of
// the bot.
func (sc *Screen) Topics(ctx context.Context, at telegram.Place, m *tgbotapi.Message, admin bool) {
	if sc.topics == nil {
		sc.say(ctx, at, "Topics cannot be set here.")
		return
	}
	key := strconv.FormatInt(at.Chat, 10)
	arg := strings.ToLower(strings.TrimSpace(m.CommandArguments()))
	if arg == "" {
		shared, err := sc.topics.ChatTopicsShared(ctx, key)
		if err != nil {
			sc.logger.Error("read how the chat keeps its topics", "chat", at, "err", err)
			sc.say(ctx, at, "Sorry, I could not read how this chat keeps its topics. Please try again.")
			return
		}
		sc.say(ctx, at, topicsText(shared))
		return
	}
	if arg != "shared" && arg != "separate" {
		sc.say(ctx, at, "Say <code>/topics shared</code> for one conversation in all topics, or <code>/topics separate</code> for one per topic.")
		return
	}
	if !sc.mayChange(ctx, m.Chat, m.From.ID, admin) {
		sc.say(ctx, at, "Only the group's administrators can change how its topics keep their conversations.")
		return
	}
	shared := arg == "shared"
	if err := sc.topics.SetChatTopicsShared(ctx, key, shared); err != nil {
		sc.logger.Error("set how the chat keeps its topics", "chat", at, "err", err)
		sc.say(ctx, at, "Sorry, I could not save that. Please try again.")
		return
	}
	sc.logger.Info("chat set how it keeps its topics", "chat", at, "user", m.From.ID, "shared", shared)
	if shared {
		sc.say(ctx, at, "Done: from your next message on, all topics share one conversation, the General topic's. Each topic's own conversation stays stored, and comes back with <code>/topics separate</code>.")
		return
	}
	sc.say(ctx, at, "Done: from your next message on, each topic is a conversation of its own again, where it was left.")
}

// topicsText says how a chat keeps its topics' conversations, and how to
// change it.
func topicsText(shared bool) string {
	if shared {
		return "🧵 <b>Topics</b>\nAll topics of this chat share one conversation, the General topic's; each answer still goes to the topic its message came from.\nGroup admins can give each topic a conversation of its own with <code>/topics separate</code>."
	}
	return "🧵 <b>Topics</b>\nIn a group with topics, each topic is a conversation of its own: its history, /model, /system, /reset and its questions; /tools is the group's.\nGroup admins can make all topics share one conversation with <code>/topics shared</code>."
}
