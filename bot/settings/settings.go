// Package settings is what a chat chooses for itself: its own
// instructions to the assistant (/system), the servers it turns off
// within what the operator enabled (/tools), which of the operator's
// models answers it (/model), and, in a forum, whether its topics share
// one conversation (/topics). Everyone in a chat may read them; in a
// group only its administrators (asked of Telegram at each change) or the
// bot's admins change them, in a private chat its user. Whether someone
// may use the bot at all, and how fast, is the bot's to check first.
package settings

import (
	"context"
	"log/slog"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// An Agent keeps what a chat chose; *agent.Agent is one. Chats are named
// by keys: /tools by the chat's Telegram id in decimal, /system and
// /model by the key of the conversation they are asked in (a forum's
// topic may have one of its own).
type Agent interface {
	// Instructions and SetInstructions keep a chat's own instructions,
	// for /system.
	Instructions(ctx context.Context, chatID string) (string, error)
	SetInstructions(ctx context.Context, chatID, instructions string) error
	// ServersOff and SetServerOff keep the servers a chat turned off for
	// itself, for /tools.
	ServersOff(ctx context.Context, chatID string) ([]string, error)
	SetServerOff(ctx context.Context, chatID, server string, off bool) error
	// Profiles, ChatProfile and SetChatProfile keep which model answers
	// a chat, for /model.
	Profiles() []mcpgram.Profile
	ChatProfile(ctx context.Context, chatID string) (mcpgram.Profile, error)
	SetChatProfile(ctx context.Context, chatID, profile string) error
}

// A Hub lists the MCP servers; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
}

// Telegram is what the screens send, edit and ask through;
// *telegram.Client is one.
type Telegram interface {
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error
	AnswerCallback(ctx context.Context, id, text string, alert bool)
	ChatMember(ctx context.Context, chatID, user int64) (tgbotapi.ChatMember, error)
}

// Topics keeps whether a forum's topics share one conversation, by the
// chat's id in decimal; *sqlite.DB and *postgres.DB are one.
type Topics interface {
	ChatTopicsShared(ctx context.Context, chatID string) (bool, error)
	SetChatTopicsShared(ctx context.Context, chatID string, shared bool) error
}

// Options are a Screen's optional settings.
type Options struct {
	// Topics keeps the choice of /topics; nil: it cannot be changed.
	Topics Topics
	Logger *slog.Logger
}

// A Screen shows and changes the settings of the chats it is asked about.
type Screen struct {
	agent  Agent
	hub    Hub
	tg     Telegram
	topics Topics // nil: /topics cannot change
	logger *slog.Logger
}

// New returns a Screen keeping the chats' choices in a, listing the
// servers of h, and talking to Telegram through tg.
func New(a Agent, h Hub, tg Telegram, opts Options) *Screen {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Screen{agent: a, hub: h, tg: tg, topics: opts.Topics, logger: opts.Logger}
}

func (sc *Screen) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := sc.tg.SendLong(ctx, to, 0, html, nil); err != nil {
		sc.logger.Error("send message", "chat", to, "err", err)
	}
}

// send sends html to place to with the buttons of kb, when there are any.
func (sc *Screen) send(ctx context.Context, to telegram.Place, html string, kb tgbotapi.InlineKeyboardMarkup, what string) {
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := sc.tg.SendLong(ctx, to, 0, html, markup); err != nil {
		sc.logger.Error("send "+what, "chat", to, "err", err)
	}
}

// mayChange reports whether user may change a setting of chat: in a
// private chat its user, in a group one of its administrators (asked of
// Telegram now) or an admin of the bot.
func (sc *Screen) mayChange(ctx context.Context, chat *tgbotapi.Chat, user int64, admin bool) bool {
	return chat.IsPrivate() || admin || sc.chatAdmin(ctx, chat.ID, user)
}

// mayPress is mayChange for the one who pressed cq; a press refused is
// answered with denied, as an alert.
func (sc *Screen) mayPress(ctx context.Context, cq *tgbotapi.CallbackQuery, admin bool, denied string) bool {
	if sc.mayChange(ctx, cq.Message.Chat, cq.From.ID, admin) {
		return true
	}
	sc.tg.AnswerCallback(ctx, cq.ID, denied, true)
	return false
}

// chatAdmin asks Telegram whether user administers the group chatID, now:
// a right taken away a minute ago counts as gone.
func (sc *Screen) chatAdmin(ctx context.Context, chatID, user int64) bool {
	member, err := sc.tg.ChatMember(ctx, chatID, user)
	if err != nil {
		sc.logger.Warn("getChatMember failed; taken as not an administrator", "chat", chatID, "user", user, "err", err)
		return false
	}
	return member.Status == "administrator" || member.Status == "creator"
}
