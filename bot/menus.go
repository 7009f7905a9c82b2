package bot

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// The command menus offer the servers' prompts (see package prompts)
// beside the bot's own commands: every chat's, and those of the chats
// that turned some server off in /tools.

// ownCommands are the bot's commands, which no prompt may take.
func ownCommands() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// handlePromptPress handles a button of a prompt's form, in the chat's
// lane, from a user who may use the bot (see prompts.Press).
func (b *Bot) handlePromptPress(ctx context.Context, q *query, data callback.Data) {
	if !b.admitPress(ctx, q.CallbackQuery) {
		return
	}
	b.prompts.Press(ctx, q.CallbackQuery, q.at, q.key, data)
}

// runPrompt runs a prompt user sent as their turn (see prompts.Options.Run).
func (b *Bot) runPrompt(ctx context.Context, at telegram.Place, key string, user int64, req agent.Request) {
	req.Exempt = b.isAdmin(user)
	b.runTurn(ctx, at, key, user, 0, req, nil)
}

// maxMenu is how many commands Telegram takes in one menu.
const maxMenu = 100

// withPrompts is the menu own followed by as many of prompts as fit.
func withPrompts(own []tgbotapi.BotCommand, prompts []promptmenu.Command) []tgbotapi.BotCommand {
	out := slices.Clone(own)
	for _, p := range prompts {
		if len(out) == maxMenu {
			break
		}
		out = append(out, tgbotapi.BotCommand{Command: p.Name, Description: p.Description})
	}
	return out
}

// menuKey says which prompts a menu offers, to tell when it changed.
func menuKey(prompts []promptmenu.Command) string {
	var sb strings.Builder
	for _, p := range prompts {
		sb.WriteString(p.Name + "\x00" + p.Description + "\x00")
	}
	return sb.String()
}

// menuLoop sets the menus again whenever the servers' prompts change (a
// server came up or stopped, or said its list changed), looking every
// MenuInterval, until ctx ends: the menus of every chat (registerCommands),
// then those of the chats that have menus of their own (chatMenus), which
// it sets first of all too, as the prompts may have changed while the bot
// was down.
func (b *Bot) menuLoop(ctx context.Context, last string) {
	b.chatMenus(ctx)
	t := time.NewTicker(b.cfg.MenuInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if key := menuKey(b.prompts.Commands()); key != last {
			last = b.registerCommands(ctx)
			b.chatMenus(ctx)
		}
	}
}

// chatMenus sets again the menus of the chats that turned some server off
// in /tools, which have menus of their own (see chatMenu).
func (b *Bot) chatMenus(ctx context.Context) {
	chats, err := b.store.ChatsWithServersOff(ctx)
	if err != nil {
		b.logger.Warn("read the chats with menus of their own; their menus may be stale", "err", err)
		return
	}
	for _, c := range chats {
		if id, err := strconv.ParseInt(c, 10, 64); err == nil && ctx.Err() == nil {
			b.chatMenu(ctx, id)
		}
	}
}

// chatMenu sets the menus of chatID alone, for the prompts it may use,
// after a change of its /tools switches or of the servers' prompts: in a
// private chat (a positive id, as Telegram numbers users) its user's, in
// a group its members' and its administrators'. A chat with every server
// on again has its own menus deleted, and shows every chat's; an
// operator's private chat gets the operators' menu back.
func (b *Bot) chatMenu(ctx context.Context, chatID int64) {
	private := chatID > 0
	off, err := b.parts.Prefs.ServersOff(ctx, strconv.FormatInt(chatID, 10))
	if err != nil {
		b.logger.Info("cannot read the chat's servers; its command menu may be stale", "chat", chatID, "err", err)
		return
	}
	prompts := b.prompts.ChatCommands(ctx, chatID)
	type menu struct {
		scope tgbotapi.BotCommandScope
		cmds  []tgbotapi.BotCommand
	}
	menus := []menu{{tgbotapi.NewBotCommandScopeChat(chatID), withPrompts(menuFor(menuEveryone), prompts)},
		{tgbotapi.NewBotCommandScopeChatAdministrators(chatID), withPrompts(menuFor(menuChatOwner), prompts)}}
	if private {
		own := menuFor(menuChatOwner)
		if b.isAdmin(chatID) {
			own = menuFor(menuOperator)
		}
		menus = []menu{{tgbotapi.NewBotCommandScopeChat(chatID), withPrompts(own, prompts)}}
	}
	for _, m := range menus {
		var req tgbotapi.Chattable = tgbotapi.NewSetMyCommandsWithScope(m.scope, m.cmds...)
		if len(off) == 0 && !(private && b.isAdmin(chatID)) {
			req = tgbotapi.NewDeleteMyCommandsWithScope(m.scope)
		}
		if _, err := b.tg.Request(ctx, req); err != nil {
			b.logger.Info("cannot set the chat's command menu", "chat", chatID, "err", err)
		}
	}
}
