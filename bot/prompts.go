package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/formcard"
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Prompts are the servers' prompt templates, which a user chooses by
// command (/NAME, listed by /prompts and in the command menu). A prompt's
// arguments are asked on a form card (see formcard), whose presses run in
// the chat's lane, like messages: no call waits for them, and what they
// end in is a turn. The form is in the store, so any instance takes the
// next press or reply. Once sent, the prompt's messages are the turn's
// input, and the chat sees them quoted.

// promptsPerPage is how many prompts one /prompts message lists.
const promptsPerPage = 40

// maxPromptShown bounds the quote of a prompt's text in the chat.
const maxPromptShown = 1500

// ownCommands are the bot's commands, which no prompt may take.
func ownCommands() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// promptCommands are the prompts of the running servers as commands.
func (b *Bot) promptCommands() []promptmenu.Command {
	return promptmenu.Commands(b.hub.Catalog(), ownCommands())
}

// chatPrompts are the prompt commands chatID may use: those of servers it
// has not turned off.
func (b *Bot) chatPrompts(ctx context.Context, chatID int64) []promptmenu.Command {
	cmds := b.promptCommands()
	off, err := b.parts.Prefs.ServersOff(ctx, strconv.FormatInt(chatID, 10))
	if err != nil {
		b.logger.Error("read the chat's servers", "chat", chatID, "err", err)
	}
	return slices.DeleteFunc(cmds, func(c promptmenu.Command) bool { return slices.Contains(off, c.Server) })
}

// showPrompts answers /prompts [page], sent at place at: the prompts the
// chat may use.
func (b *Bot) showPrompts(ctx context.Context, at telegram.Place, arg string) {
	cmds := b.chatPrompts(ctx, at.Chat)
	if len(cmds) == 0 {
		b.say(ctx, at, "No server offers prompts here.")
		return
	}
	pages := (len(cmds) + promptsPerPage - 1) / promptsPerPage
	page, err := strconv.Atoi(strings.TrimSpace(arg))
	if err != nil || page < 1 || page > pages {
		page = 1
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<b>Prompts</b> (%s; send one as a command, and I ask for what it needs):\n", render.Count(len(cmds), "prompt"))
	server := ""
	for _, c := range cmds[(page-1)*promptsPerPage : min(len(cmds), page*promptsPerPage)] {
		if c.Server != server {
			server = c.Server
			sb.WriteString("\n<b>" + render.Shown(server) + "</b>\n")
		}
		fmt.Fprintf(&sb, "/%s – %s\n", c.Name, render.Shown(render.Shorten(c.Description, 100)))
	}
	if pages > 1 {
		fmt.Fprintf(&sb, "\n<i>Page %d of %d: /prompts %d for the next.</i>", page, pages, page%pages+1)
	}
	b.say(ctx, at, sb.String())
}

// startPrompt answers /NAME for the prompt of cmd: its form, or (with no
// arguments) the prompt itself.
func (b *Bot) startPrompt(ctx context.Context, m *message, cmd promptmenu.Command) {
	user := m.From.ID
	who := caller(user, m.key)
	f, err := b.parts.Prompts.OpenPrompt(ctx, who, cmd.Server, cmd.Prompt)
	switch {
	case errors.Is(err, agent.ErrNoPrompt):
		b.say(ctx, m.at, "That prompt is not available here right now.")
		return
	case err != nil:
		b.logger.Error("open a prompt", "chat", m.at, "server", cmd.Server, "prompt", cmd.Prompt, "err", err)
		b.say(ctx, m.at, "Sorry, something went wrong on my side. Please try again.")
		return
	case f == nil:
		b.sendPrompt(ctx, m.at, m.key, user, cmd.Server, cmd.Prompt, nil)
		return
	}
	b.showPromptForm(ctx, m.at, m.key, user, f)
}

// showPromptForm sends to place at the card of prompt form f, of the
// conversation key.
func (b *Bot) showPromptForm(ctx context.Context, at telegram.Place, key string, user int64, f *agent.Form) {
	html, markup := promptFormMessage(f, at.Chat < 0)
	msg, err := b.tg.SendHTML(ctx, at, 0, html, markup)
	if err != nil {
		b.logger.Error("send prompt form", "chat", at, "form", f.ID, "err", err)
		return
	}
	b.promptCards.Put(f.ID, forms.Card{ChatID: at.Chat, Key: key, MsgID: msg.MessageID, User: user})
}

// promptFormMessage is the card of prompt form f.
func promptFormMessage(f *agent.Form, group bool) (string, *tgbotapi.InlineKeyboardMarkup) {
	head := fmt.Sprintf("💬 Prompt <code>%s</code> of <b>%s</b>", render.Shown(f.Prompt), render.Shown(f.Server))
	if msg := strings.TrimSpace(f.Message); msg != "" {
		head += "\n<blockquote expandable>" + render.Shown(render.Shorten(msg, forms.MaxShownMessage)) + "</blockquote>"
	}
	if !f.Open() {
		switch f.Outcome {
		case agent.FormAccepted:
			return head + "\n\n✅ <i>Sent.</i>", nil
		case agent.FormCancelled, agent.FormDeclined:
			return head + "\n\n✖️ <i>Cancelled.</i>", nil
		}
		return head + "\n\n<i>Closed.</i>", nil
	}
	c := formcard.Card{ID: f.ID, Head: head, Fields: f.Fields, State: f.State, Note: f.Note, Group: group, Expires: f.ExpiresAt,
		Kind: callback.PromptForm, Suggestions: f.Suggestions, CancelOnly: true}
	kb := formcard.Keyboard(c)
	return formcard.Text(c), &kb
}

// handlePromptPress handles a button of a prompt's form, in the chat's
// lane: only the user who chose the prompt may press it; Submit sends the
// prompt. (A Decline press, from a card shown before its card had Cancel
// alone, cancels.)
func (b *Bot) handlePromptPress(ctx context.Context, q *query, data callback.Data) {
	cq := q.CallbackQuery
	if !b.admitPress(ctx, cq) {
		return
	}
	user := cq.From.ID
	f, ok := b.promptInput(ctx, cq, q.at, q.key, user, data.Pending, forms.Input(data))
	if !ok {
		return
	}
	b.tg.AnswerCallback(ctx, cq.ID, render.Visible(render.Shorten(f.Note, 180)), f.Note != "")
	b.updatePromptForm(ctx, q.at, q.key, user, cq.Message.MessageID, f)
	if f.Outcome == agent.FormAccepted {
		b.sendPrompt(ctx, q.at, q.key, user, f.Server, f.Prompt, f)
	}
}

// promptInput gives in to prompt form id, of user in the conversation
// key at place at, answering the press cq (if any) when it cannot be
// taken.
func (b *Bot) promptInput(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, user, id int64, in agent.FormInput) (*agent.Form, bool) {
	chatID := at.Chat
	f, err := b.parts.Forms.FormInput(ctx, caller(user, key), id, in)
	if err == nil && f.Mode != agent.ModePrompt {
		err = agent.ErrStale // a server's form: its own buttons answer it
	}
	answer := func(text string) {
		if cq != nil {
			b.tg.AnswerCallback(ctx, cq.ID, text, true)
		}
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		answer("This form is for the person who chose the prompt; only they can fill it in.")
		return nil, false
	case errors.Is(err, agent.ErrStale):
		answer("This form is no longer open.")
		if cq != nil {
			b.tg.RemoveKeyboard(ctx, chatID, cq.Message.MessageID)
		}
		return nil, false
	case err != nil:
		b.logger.Error("prompt form input", "chat", chatID, "form", id, "err", err)
		answer("Sorry, something went wrong.")
		return nil, false
	}
	return f, true
}

// updatePromptForm shows f on its card: message msgID, or (0) the card
// this instance sent, or else a new card at place at.
func (b *Bot) updatePromptForm(ctx context.Context, at telegram.Place, key string, user int64, msgID int, f *agent.Form) {
	chatID := at.Chat
	if msgID == 0 {
		c, ok := b.promptCards.Get(f.ID, chatID)
		if !ok {
			if f.Open() {
				b.showPromptForm(ctx, at, key, user, f)
			}
			return
		}
		msgID = c.MsgID
	}
	html, markup := promptFormMessage(f, chatID < 0)
	if !f.Open() {
		b.promptCards.Drop(f.ID)
	}
	if err := b.tg.EditHTML(ctx, chatID, msgID, html, markup); err != nil {
		b.logger.Debug("edit prompt form", "chat", chatID, "form", f.ID, "err", err)
	}
}

// promptText gives a typed message of its user to their open prompt
// form in the chat, and reports whether it did: in a private chat any
// message, in a group a reply to the bot.
func (b *Bot) promptText(ctx context.Context, m *message) bool {
	if m.From == nil || m.Text == "" || m.IsCommand() {
		return false
	}
	user := m.From.ID
	if !m.Chat.IsPrivate() && (m.ReplyToMessage == nil || m.ReplyToMessage.From == nil || m.ReplyToMessage.From.ID != b.self.ID) {
		return false
	}
	open, found, err := b.parts.Prompts.OpenPromptForm(ctx, caller(user, m.key))
	if err != nil {
		b.logger.Error("open prompt form", "chat", m.at, "err", err)
		return false
	}
	if !found {
		return false
	}
	f, ok := b.promptInput(ctx, nil, m.at, m.key, user, open.ID, agent.FormInput{Op: agent.FormType, Text: m.Text, Step: -1})
	if !ok {
		return false
	}
	if f.Note != "" {
		if _, err := b.tg.SendHTML(ctx, m.at, m.MessageID, "⚠️ "+render.Shown(f.Note)+" Try again.", nil); err != nil {
			b.logger.Debug("send form note", "chat", m.at, "err", err)
		}
	}
	b.updatePromptForm(ctx, m.at, m.key, user, 0, f)
	return true
}

// sendPrompt gets prompt name of server (with the arguments of form f,
// if any), shows place at what it says, and runs it as user's turn in
// the conversation key.
func (b *Bot) sendPrompt(ctx context.Context, at telegram.Place, key string, user int64, server, name string, f *agent.Form) {
	var args map[string]string
	if f != nil {
		var err error
		if args, err = agent.PromptArguments(f); err != nil {
			b.logger.Error("prompt arguments", "chat", at, "err", err)
			b.say(ctx, at, "Sorry, something went wrong on my side. Please try again.")
			return
		}
	}
	who := caller(user, key)
	in, err := b.parts.Prompts.GetPrompt(ctx, who, server, name, args)
	switch {
	case errors.Is(err, agent.ErrNoPrompt):
		b.say(ctx, at, "That prompt is not available here right now.")
		return
	case err != nil:
		b.logger.Warn("get a prompt", "chat", at, "server", server, "prompt", name, "err", err)
		b.say(ctx, at, "Sorry, "+render.Shown(server)+" could not give the prompt <code>"+render.Shown(name)+"</code>. Please try again later.")
		return
	}
	b.say(ctx, at, promptQuote(in))
	b.runTurn(ctx, at, key, user, 0, agent.Request{Caller: who, Text: in.Text, Images: in.Images, Exempt: b.isAdmin(user)}, nil)
}

// promptQuote is what the chat sees of a prompt sent: its text, quoted
// (its beginning, when long), and how many images went with it.
func promptQuote(in agent.PromptInput) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "💬 <i>Sent the prompt</i> <code>%s</code> <i>of</i> <b>%s</b>:", render.Shown(in.Prompt), render.Shown(in.Server))
	if strings.TrimSpace(in.Text) != "" {
		sb.WriteString("\n<blockquote expandable>" + render.Shown(render.Shorten(in.Text, maxPromptShown)) + "</blockquote>")
	}
	if n := len(in.Images); n > 0 {
		sb.WriteString("\n🖼 " + render.Count(n, "image"))
	}
	if in.Left > 0 {
		fmt.Fprintf(&sb, "\n<i>%s left out.</i>", render.Count(in.Left, "image"))
	}
	return sb.String()
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
		if key := menuKey(b.promptCommands()); key != last {
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
	prompts := b.chatPrompts(ctx, chatID)
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

// isPrompt reports whether name is the command of a running server's
// prompt (in any chat: which chats may use it is checked when it runs).
func (b *Bot) isPrompt(name string) bool {
	_, ok := promptmenu.Find(b.promptCommands(), name)
	return ok
}
