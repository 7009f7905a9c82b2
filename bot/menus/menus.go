// Package menus sets the bot's command menus: its own commands for each
// level (everyone, a chat's owner, the operators), followed by the
// servers' prompts (see package prompts), for every chat, and for the
// chats that turned some server off in /tools, which have menus of their
// own. It sets them again whenever the prompts change. A failure costs
// only a stale menu: every command works whatever the menu shows.
package menus

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/promptmenu"
)

// maxMenu is how many commands Telegram takes in one menu.
const maxMenu = 100

// Prompts are the servers' prompts as commands; *prompts.Prompts is one.
type Prompts interface {
	Commands() []promptmenu.Command
	ChatCommands(ctx context.Context, chatID int64) []promptmenu.Command
}

// Prefs tell the servers a chat turned off; *agent.Prefs is one.
type Prefs interface {
	ServersOff(ctx context.Context, chatID string) ([]string, error)
}

// A Store lists the chats with menus of their own (see
// store.ChatSettings); *sqlite.DB and *postgres.DB are one.
type Store interface {
	ChatsWithServersOff(ctx context.Context) ([]string, error)
}

// Telegram is what the menus are set through; *telegram.Client is one.
type Telegram interface {
	Request(ctx context.Context, call tgbotapi.Chattable) (*tgbotapi.APIResponse, error)
}

// Lists are the bot's own commands at each level of menu.
type Lists struct {
	// Everyone's: every member of a group, and the default.
	Everyone []tgbotapi.BotCommand
	// ChatOwner's: a private chat's user, a group's administrators.
	ChatOwner []tgbotapi.BotCommand
	// Operator's: the bot's admins, in their private chats.
	Operator []tgbotapi.BotCommand
}

// Options are the settings of Menus.
type Options struct {
	// Admins are the bot's admins, whose private chats get the
	// operators' menu.
	Admins []int64
	// Interval is how often the menus are checked against the servers'
	// prompts; required.
	Interval time.Duration
	Logger   *slog.Logger
}

// Menus are the bot's command menus.
type Menus struct {
	prompts  Prompts
	prefs    Prefs
	store    Store
	tg       Telegram
	lists    Lists
	admins   []int64
	interval time.Duration
	logger   *slog.Logger
}

// New returns the Menus of the bot's own commands lists and the prompts
// of p, in the chats as prefs and s say, set through tg.
func New(lists Lists, p Prompts, prefs Prefs, s Store, tg Telegram, opts Options) *Menus {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Menus{prompts: p, prefs: prefs, store: s, tg: tg, lists: lists, admins: opts.Admins, interval: opts.Interval, logger: opts.Logger}
}

// isAdmin reports whether user is one of the bot's admins.
func (ms *Menus) isAdmin(user int64) bool { return slices.Contains(ms.admins, user) }

// Register sets the menus (see Lists), the servers' prompts
// after the bot's own commands, and returns which prompts they offer (see
// key). Telegram shows a user the most specific menu that applies: in
// a private chat, the chat's own (operators) before all_private_chats; in
// a group, an administrator's all_chat_administrators before
// all_group_chats. A failure costs only a stale menu: every command works
// whatever the menu shows.
func (ms *Menus) Register(ctx context.Context) string {
	prompts := ms.prompts.Commands()
	for _, m := range []struct {
		scope tgbotapi.BotCommandScope
		cmds  []tgbotapi.BotCommand
	}{
		{tgbotapi.NewBotCommandScopeDefault(), withPrompts(ms.lists.Everyone, prompts)},
		{tgbotapi.NewBotCommandScopeAllPrivateChats(), withPrompts(ms.lists.ChatOwner, prompts)},
		{tgbotapi.NewBotCommandScopeAllGroupChats(), withPrompts(ms.lists.Everyone, prompts)},
		{tgbotapi.NewBotCommandScopeAllChatAdministrators(), withPrompts(ms.lists.ChatOwner, prompts)},
	} {
		if _, err := ms.tg.Request(ctx, tgbotapi.NewSetMyCommandsWithScope(m.scope, m.cmds...)); err != nil {
			ms.logger.Warn("setMyCommands failed; the command menu may be stale", "scope", m.scope.Type, "err", err)
		}
	}
	for _, id := range ms.admins {
		// Fails with "chat not found" until the admin has talked to the
		// bot once; /servers works regardless.
		scope := tgbotapi.NewBotCommandScopeChat(id)
		if _, err := ms.tg.Request(ctx, tgbotapi.NewSetMyCommandsWithScope(scope, withPrompts(ms.lists.Operator, prompts)...)); err != nil {
			ms.logger.Info("cannot set the admin command menu", "admin", id, "err", err)
		}
	}
	return key(prompts)
}

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

// key says which prompts a menu offers, to tell when it changed.
func key(prompts []promptmenu.Command) string {
	var sb strings.Builder
	for _, p := range prompts {
		sb.WriteString(p.Name + "\x00" + p.Description + "\x00")
	}
	return sb.String()
}

// Loop sets the menus again whenever the servers' prompts change (a
// server came up or stopped, or said its list changed), looking every
// Interval, until ctx ends: the menus of every chat (Register),
// then those of the chats that have menus of their own (chats), which
// it sets first of all too, as the prompts may have changed while the bot
// was down.
func (ms *Menus) Loop(ctx context.Context, last string) {
	ms.chats(ctx)
	t := time.NewTicker(ms.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if key := key(ms.prompts.Commands()); key != last {
			last = ms.Register(ctx)
			ms.chats(ctx)
		}
	}
}

// chats sets again the menus of the chats that turned some server off
// in /tools, which have menus of their own (see Chat).
func (ms *Menus) chats(ctx context.Context) {
	chats, err := ms.store.ChatsWithServersOff(ctx)
	if err != nil {
		ms.logger.Warn("read the chats with menus of their own; their menus may be stale", "err", err)
		return
	}
	for _, c := range chats {
		if id, err := strconv.ParseInt(c, 10, 64); err == nil && ctx.Err() == nil {
			ms.Chat(ctx, id)
		}
	}
}

// Chat sets the menus of chatID alone, for the prompts it may use,
// after a change of its /tools switches or of the servers' prompts: in a
// private chat (a positive id, as Telegram numbers users) its user's, in
// a group its members' and its administrators'. A chat with every server
// on again has its own menus deleted, and shows every chat's; an
// operator's private chat gets the operators' menu back.
func (ms *Menus) Chat(ctx context.Context, chatID int64) {
	private := chatID > 0
	off, err := ms.prefs.ServersOff(ctx, strconv.FormatInt(chatID, 10))
	if err != nil {
		ms.logger.Info("cannot read the chat's servers; its command menu may be stale", "chat", chatID, "err", err)
		return
	}
	prompts := ms.prompts.ChatCommands(ctx, chatID)
	type menu struct {
		scope tgbotapi.BotCommandScope
		cmds  []tgbotapi.BotCommand
	}
	menus := []menu{{tgbotapi.NewBotCommandScopeChat(chatID), withPrompts(ms.lists.Everyone, prompts)},
		{tgbotapi.NewBotCommandScopeChatAdministrators(chatID), withPrompts(ms.lists.ChatOwner, prompts)}}
	if private {
		own := ms.lists.ChatOwner
		if ms.isAdmin(chatID) {
			own = ms.lists.Operator
		}
		menus = []menu{{tgbotapi.NewBotCommandScopeChat(chatID), withPrompts(own, prompts)}}
	}
	for _, m := range menus {
		var req tgbotapi.Chattable = tgbotapi.NewSetMyCommandsWithScope(m.scope, m.cmds...)
		if len(off) == 0 && !(private && ms.isAdmin(chatID)) {
			req = tgbotapi.NewDeleteMyCommandsWithScope(m.scope)
		}
		if _, err := ms.tg.Request(ctx, req); err != nil {
			ms.logger.Info("cannot set the chat's command menu", "chat", chatID, "err", err)
		}
	}
}
