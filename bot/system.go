package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
)

// /system: a chat's own instructions to the assistant, added to the system
// prompt after the shared part. In a group only its administrators (or the
// bot's admins) change them; everyone may read them.

func (b *Bot) handleSystem(ctx context.Context, m *tgbotapi.Message) {
	chatID, user := m.Chat.ID, m.From.ID
	key := strconv.FormatInt(chatID, 10)
	arg := strings.TrimSpace(m.CommandArguments())
	if arg == "" {
		cur, err := b.agent.Instructions(ctx, key)
		if err != nil {
			b.logger.Error("read instructions", "chat", chatID, "err", err)
			b.say(ctx, chatID, "Sorry, I could not read this chat's instructions. Please try again.")
			return
		}
		b.say(ctx, chatID, systemText(cur))
		return
	}
	if !m.Chat.IsPrivate() && !b.isAdmin(user) && !b.chatAdmin(ctx, chatID, user) {
		b.say(ctx, chatID, "Only the group's administrators can change its instructions.")
		return
	}
	if strings.EqualFold(arg, "clear") {
		arg = ""
	}
	err := b.agent.SetInstructions(ctx, key, arg)
	switch {
	case errors.Is(err, agent.ErrInstructionsTooLong):
		b.say(ctx, chatID, fmt.Sprintf("Instructions can be at most %d characters.", agent.MaxInstructions))
	case err != nil:
		b.logger.Error("set instructions", "chat", chatID, "err", err)
		b.say(ctx, chatID, "Sorry, I could not save the instructions. Please try again.")
	case arg == "":
		b.say(ctx, chatID, "Instructions cleared.")
	default:
		b.say(ctx, chatID, "Saved. From your next message on I follow:\n<blockquote expandable>"+render.Escape(arg)+"</blockquote>")
	}
}

// systemText shows a chat's instructions and how to change them.
func systemText(cur string) string {
	how := "\n\nSet them with <code>/system your instructions</code>, clear them with <code>/system clear</code>."
	if cur == "" {
		return "This chat has no instructions of its own." + how
	}
	return "<b>Instructions for this chat</b>\n<blockquote expandable>" + render.Escape(cur) + "</blockquote>" + how
}

// mayChangeChat reports whether the one who pressed cq may change a
// setting of the chat its button is in: allowed, within the rate limit,
// and in a group one of its administrators (asked of Telegram now) or an
// admin of the bot. A press refused is answered with an alert; denied is
// what a group member who may not is told.
func (b *Bot) mayChangeChat(ctx context.Context, cq *tgbotapi.CallbackQuery, denied string) bool {
	chatID, user := cq.Message.Chat.ID, cq.From.ID
	switch {
	case !b.isAllowed(user):
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
	case !b.allowPress(ctx, cq):
	case !cq.Message.Chat.IsPrivate() && !b.isAdmin(user) && !b.chatAdmin(ctx, chatID, user):
		b.tg.AnswerCallback(ctx, cq.ID, denied, true)
	default:
		return true
	}
	return false
}

// chatAdmin asks Telegram whether user administers the group chatID, now:
// a right taken away a minute ago counts as gone.
func (b *Bot) chatAdmin(ctx context.Context, chatID, user int64) bool {
	member, err := b.tg.ChatMember(ctx, chatID, user)
	if err != nil {
		b.logger.Warn("getChatMember failed; taken as not an administrator", "chat", chatID, "user", user, "err", err)
		return false
	}
	return member.Status == "administrator" || member.Status == "creator"
}
