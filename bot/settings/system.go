package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// System answers /system, m, sent at place at in the conversation key:
// without arguments it shows the conversation's own instructions to the
// assistant, added to the system prompt after the shared part; with them
// it sets them ("clear" clears them), if the sender may. admin says the
// sender is an admin of the bot.
func (sc *Screen) System(ctx context.Context, at telegram.Place, key string, m *tgbotapi.Message, admin bool) {
	user := m.From.ID
	arg := strings.TrimSpace(m.CommandArguments())
	if arg == "" {
		cur, err := sc.agent.Instructions(ctx, key)
		if err != nil {
			sc.logger.Error("read instructions", "chat", at, "err", err)
			sc.say(ctx, at, "Sorry, I could not read this chat's instructions. Please try again.")
			return
		}
		sc.say(ctx, at, systemText(cur))
		return
	}
	if !sc.mayChange(ctx, m.Chat, user, admin) {
		sc.say(ctx, at, "Only the group's administrators can change its instructions.")
		return
	}
	if strings.EqualFold(arg, "clear") {
		arg = ""
	}
	err := sc.agent.SetInstructions(ctx, key, arg)
	switch {
	case errors.Is(err, agent.ErrInstructionsTooLong):
		sc.say(ctx, at, fmt.Sprintf("Instructions can be at most %d characters.", agent.MaxInstructions))
	case err != nil:
		sc.logger.Error("set instructions", "chat", at, "err", err)
		sc.say(ctx, at, "Sorry, I could not save the instructions. Please try again.")
	case arg == "":
		sc.say(ctx, at, "Instructions cleared.")
	default:
		sc.say(ctx, at, "Saved. From your next message on I follow:\n<blockquote expandable>"+render.Escape(arg)+"</blockquote>")
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
