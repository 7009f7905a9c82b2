// Package chats names the bot's conversations. A conversation is named by
// its key, which the agent and the store take as they come: the String of
// its place (see telegram.Place), that is the chat's id, or for a forum
// topic with a conversation of its own the chat's id, "/" and the topic's.
// A chat's own key (a private chat, a group without topics, a forum's
// General topic or a forum whose topics share one conversation) is its
// id, as before topics.
package chats

import (
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Key is the key of chat itself, and of its settings that are the
// group's whatever its topics (/tools, /topics).
func Key(chat int64) string { return strconv.FormatInt(chat, 10) }

// Of is the key of the chat a conversation's key names (see
// agent.Options.Chat): the group's for one of its topics, the key itself
// otherwise.
func Of(key string) string {
	chat, _, ok := strings.Cut(key, "/")
	if !ok {
		return key
	}
	return chat
}

// PlaceOf is the place a conversation's key names: a chat, or one of its
// topics. A shared forum's key names the chat, whose General topic is
// where what the bot says unasked (an expired approval's end) goes.
func PlaceOf(key string) (telegram.Place, bool) {
	chat, topic, found := strings.Cut(key, "/")
	id, err := strconv.ParseInt(chat, 10, 64)
	if err != nil {
		return telegram.Place{}, false
	}
	p := telegram.In(id)
	if found {
		if p.Topic, err = strconv.Atoi(topic); err != nil || p.Topic <= 0 {
			return telegram.Place{}, false
		}
	}
	return p, true
}

// IsGroup reports whether a conversation's key names a group, shared with
// others (see agent.Options.Group): Telegram gives groups, supergroups
// and channels negative ids, a user's private chat with the bot the
// user's id.
func IsGroup(key string) bool { return strings.HasPrefix(key, "-") }
