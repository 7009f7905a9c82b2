// Package prompts is the servers' prompt templates, which a user chooses
// by command (/NAME, listed by /prompts and in the command menu). A
// prompt's arguments are asked on a form card (see formcard), whose
// presses run in the chat's lane, like messages: no call waits for them,
// and what they end in is a turn. The form is in the store, so any
// instance takes the next press or reply. Once sent, the prompt's
// messages are the turn's input, and the chat sees them quoted. Who may
// use the bot, and press, is the bot's to check first.
package prompts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/formcard"
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// promptsPerPage is how many prompts one /prompts message lists.
const promptsPerPage = 40

// maxPromptShown bounds the quote of a prompt's text in the chat.
const maxPromptShown = 1500

// An Agent opens the prompts users choose and gives their messages (see
// agent.Prompts); *agent.Prompts is one.
type Agent interface {
	OpenPrompt(ctx context.Context, caller mcpgram.Caller, server, name string) (*agent.Form, error)
	OpenPromptForm(ctx context.Context, caller mcpgram.Caller) (*agent.Form, bool, error)
	GetPrompt(ctx context.Context, caller mcpgram.Caller, server, name string, args map[string]string) (agent.PromptInput, error)
}

// Prefs tell the servers a chat turned off, whose prompts it does not
// offer; *agent.Prefs is one.
type Prefs interface {
	ServersOff(ctx context.Context, chatID string) ([]string, error)
}

// A Hub lists the servers' prompts; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
}

// Telegram is what the prompts' cards are sent, edited and answered
// through; *telegram.Client is one.
type Telegram interface {
	SendHTML(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error
	AnswerCallback(ctx context.Context, id, text string, alert bool)
	RemoveKeyboard(ctx context.Context, chatID int64, msgID int)
}

// Options are the settings of Prompts. Run is required.
type Options struct {
	// Own are the bot's own commands, which no prompt may take.
	Own []string
	// Run runs a sent prompt as user's turn in the conversation key, at
	// place at.
	Run func(ctx context.Context, at telegram.Place, key string, user int64, req agent.Request)
	// BotID returns the bot's user id, which a reply in a group must
	// answer; it is known once the bot asked Telegram (getMe).
	BotID  func() int64
	Logger *slog.Logger
}

// Prompts are the prompts users choose, and their forms' cards this
// instance sent.
type Prompts struct {
	agent  Agent
	forms  forms.Agent
	prefs  Prefs
	hub    Hub
	tg     Telegram
	own    []string
	run    func(ctx context.Context, at telegram.Place, key string, user int64, req agent.Request)
	botID  func() int64
	logger *slog.Logger
	cards  forms.Registry
}

// New returns the Prompts of the servers of h, opened through a, whose
// forms f answers, in the chats as prefs say, talking through tg.
func New(a Agent, f forms.Agent, prefs Prefs, h Hub, tg Telegram, opts Options) *Prompts {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.BotID == nil {
		opts.BotID = func() int64 { return 0 }
	}
	return &Prompts{agent: a, forms: f, prefs: prefs, hub: h, tg: tg, own: opts.Own, run: opts.Run, botID: opts.BotID, logger: opts.Logger}
}

// say sends html to place at.
func (ps *Prompts) say(ctx context.Context, at telegram.Place, html string) {
	if _, err := ps.tg.SendLong(ctx, at, 0, html, nil); err != nil {
		ps.logger.Error("send message", "chat", at, "err", err)
	}
}

// caller is the user of a conversation as the agent names them.
func caller(user int64, key string) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: key}
}

// Commands are the prompts of the running servers as commands.
func (ps *Prompts) Commands() []promptmenu.Command {
	return promptmenu.Commands(ps.hub.Catalog(), ps.own)
}

// ChatCommands are the prompt commands chatID may use: those of servers it
// has not turned off.
func (ps *Prompts) ChatCommands(ctx context.Context, chatID int64) []promptmenu.Command {
	cmds := ps.Commands()
	off, err := ps.prefs.ServersOff(ctx, strconv.FormatInt(chatID, 10))
	if err != nil {
		ps.logger.Error("read the chat's servers", "chat", chatID, "err", err)
	}
	return slices.DeleteFunc(cmds, func(c promptmenu.Command) bool { return slices.Contains(off, c.Server) })
}

// Show answers /prompts [page], sent at place at: the prompts the
// chat may use.
func (ps *Prompts) Show(ctx context.Context, at telegram.Place, arg string) {
	cmds := ps.ChatCommands(ctx, at.Chat)
	if len(cmds) == 0 {
		ps.say(ctx, at, "No server offers prompts here.")
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
	ps.say(ctx, at, sb.String())
}

// Start answers /NAME, sent by user at place at in the conversation
// key, for the prompt of cmd: its form, or (with no
// arguments) the prompt itself.
func (ps *Prompts) Start(ctx context.Context, at telegram.Place, key string, user int64, cmd promptmenu.Command) {
	who := caller(user, key)
	f, err := ps.agent.OpenPrompt(ctx, who, cmd.Server, cmd.Prompt)
	switch {
	case errors.Is(err, agent.ErrNoPrompt):
		ps.say(ctx, at, "That prompt is not available here right now.")
		return
	case err != nil:
		ps.logger.Error("open a prompt", "chat", at, "server", cmd.Server, "prompt", cmd.Prompt, "err", err)
		ps.say(ctx, at, "Sorry, something went wrong on my side. Please try again.")
		return
	case f == nil:
		ps.send(ctx, at, key, user, cmd.Server, cmd.Prompt, nil)
		return
	}
	ps.showForm(ctx, at, key, user, f)
}

// showForm sends to place at the card of prompt form f, of the
// conversation key.
func (ps *Prompts) showForm(ctx context.Context, at telegram.Place, key string, user int64, f *agent.Form) {
	html, markup := formMessage(f, at.Chat < 0)
	msg, err := ps.tg.SendHTML(ctx, at, 0, html, markup)
	if err != nil {
		ps.logger.Error("send prompt form", "chat", at, "form", f.ID, "err", err)
		return
	}
	ps.cards.Put(f.ID, forms.Card{ChatID: at.Chat, Key: key, MsgID: msg.MessageID, User: user})
}

// formMessage is the card of prompt form f.
func formMessage(f *agent.Form, group bool) (string, *tgbotapi.InlineKeyboardMarkup) {
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

// Press handles a button of a prompt's form, pressed at place at in the
// conversation key, in the chat's
// lane: only the user who chose the prompt may press it; Submit sends the
// prompt. (A Decline press, from a card shown before its card had Cancel
// alone, cancels.)
func (ps *Prompts) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, data callback.Data) {
	user := cq.From.ID
	f, ok := ps.input(ctx, cq, at, key, user, data.Pending, forms.Input(data))
	if !ok {
		return
	}
	ps.tg.AnswerCallback(ctx, cq.ID, render.Visible(render.Shorten(f.Note, 180)), f.Note != "")
	ps.updateForm(ctx, at, key, user, cq.Message.MessageID, f)
	if f.Outcome == agent.FormAccepted {
		ps.send(ctx, at, key, user, f.Server, f.Prompt, f)
	}
}

// input gives in to prompt form id, of user in the conversation
// key at place at, answering the press cq (if any) when it cannot be
// taken.
func (ps *Prompts) input(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, user, id int64, in agent.FormInput) (*agent.Form, bool) {
	chatID := at.Chat
	f, err := ps.forms.FormInput(ctx, caller(user, key), id, in)
	if err == nil && f.Mode != agent.ModePrompt {
		err = agent.ErrStale // a server's form: its own buttons answer it
	}
	answer := func(text string) {
		if cq != nil {
			ps.tg.AnswerCallback(ctx, cq.ID, text, true)
		}
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		answer("This form is for the person who chose the prompt; only they can fill it in.")
		return nil, false
	case errors.Is(err, agent.ErrStale):
		answer("This form is no longer open.")
		if cq != nil {
			ps.tg.RemoveKeyboard(ctx, chatID, cq.Message.MessageID)
		}
		return nil, false
	case err != nil:
		ps.logger.Error("prompt form input", "chat", chatID, "form", id, "err", err)
		answer("Sorry, something went wrong.")
		return nil, false
	}
	return f, true
}

// updateForm shows f on its card: message msgID, or (0) the card
// this instance sent, or else a new card at place at.
func (ps *Prompts) updateForm(ctx context.Context, at telegram.Place, key string, user int64, msgID int, f *agent.Form) {
	chatID := at.Chat
	if msgID == 0 {
		c, ok := ps.cards.Get(f.ID, chatID)
		if !ok {
			if f.Open() {
				ps.showForm(ctx, at, key, user, f)
			}
			return
		}
		msgID = c.MsgID
	}
	html, markup := formMessage(f, chatID < 0)
	if !f.Open() {
		ps.cards.Drop(f.ID)
	}
	if err := ps.tg.EditHTML(ctx, chatID, msgID, html, markup); err != nil {
		ps.logger.Debug("edit prompt form", "chat", chatID, "form", f.ID, "err", err)
	}
}

// Text gives a typed message m, sent at place at in the conversation
// key, of its user to their open prompt
// form in the chat, and reports whether it did: in a private chat any
// message, in a group a reply to the bot.
func (ps *Prompts) Text(ctx context.Context, at telegram.Place, key string, m *tgbotapi.Message) bool {
	if m.From == nil || m.Text == "" || m.IsCommand() {
		return false
	}
	user := m.From.ID
	if !m.Chat.IsPrivate() && (m.ReplyToMessage == nil || m.ReplyToMessage.From == nil || m.ReplyToMessage.From.ID != ps.botID()) {
		return false
	}
	open, found, err := ps.agent.OpenPromptForm(ctx, caller(user, key))
	if err != nil {
		ps.logger.Error("open prompt form", "chat", at, "err", err)
		return false
	}
	if !found {
		return false
	}
	f, ok := ps.input(ctx, nil, at, key, user, open.ID, agent.FormInput{Op: agent.FormType, Text: m.Text, Step: -1})
	if !ok {
		return false
	}
	if f.Note != "" {
		if _, err := ps.tg.SendHTML(ctx, at, m.MessageID, "⚠️ "+render.Shown(f.Note)+" Try again.", nil); err != nil {
			ps.logger.Debug("send form note", "chat", at, "err", err)
		}
	}
	ps.updateForm(ctx, at, key, user, 0, f)
	return true
}

// send gets prompt name of server (with the arguments of form f,
// if any), shows place at what it says, and runs it as user's turn in
// the conversation key.
func (ps *Prompts) send(ctx context.Context, at telegram.Place, key string, user int64, server, name string, f *agent.Form) {
	var args map[string]string
	if f != nil {
		var err error
		if args, err = agent.PromptArguments(f); err != nil {
			ps.logger.Error("prompt arguments", "chat", at, "err", err)
			ps.say(ctx, at, "Sorry, something went wrong on my side. Please try again.")
			return
		}
	}
	who := caller(user, key)
	in, err := ps.agent.GetPrompt(ctx, who, server, name, args)
	switch {
	case errors.Is(err, agent.ErrNoPrompt):
		ps.say(ctx, at, "That prompt is not available here right now.")
		return
	case err != nil:
		ps.logger.Warn("get a prompt", "chat", at, "server", server, "prompt", name, "err", err)
		ps.say(ctx, at, "Sorry, "+render.Shown(server)+" could not give the prompt <code>"+render.Shown(name)+"</code>. Please try again later.")
		return
	}
	ps.say(ctx, at, quote(in))
	ps.run(ctx, at, key, user, agent.Request{Caller: who, Text: in.Text, Images: in.Images})
}

// quote is what the chat sees of a prompt sent: its text, quoted
// (its beginning, when long), and how many images went with it.
func quote(in agent.PromptInput) string {
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

// IsPrompt reports whether name is the command of a running server's
// prompt (in any chat: which chats may use it is checked when it runs).
func (ps *Prompts) IsPrompt(name string) bool {
	_, ok := promptmenu.Find(ps.Commands(), name)
	return ok
}
