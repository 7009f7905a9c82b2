package bot

import (
	"context"
	"strings"
)

// A group's form or sign-in is answered in its user's private chat (see
// package connect): the link on the group's card sends /start with the
// form's id.

// IsGroup reports whether a chat (its key: its id, in decimal, and for a
// forum's topic "/" and the topic's) is a group, shared with others:
// Telegram gives groups, supergroups and channels negative ids, a user's
// private chat with the bot the user's id.
func IsGroup(chatID string) bool { return strings.HasPrefix(chatID, "-") }

// start answers /start: the greeting, or, with a deep link's payload,
// what the link asks.
func (b *Bot) start(ctx context.Context, m *message) {
	if payload := m.CommandArguments(); payload != "" {
		b.signIns.OpenPrivately(ctx, m.at, m.key, m.From.ID, m.Chat.IsPrivate(), payload)
		return
	}
	b.say(ctx, m.at, b.startText(m.From.ID))
}
