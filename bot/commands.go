package bot

import (
	"context"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
	"github.com/mcpgram/mcpgram/bot/render"
)

// The bot's /commands, in one table: what each does, who sees it in
// which menu, how it is ordered with the chat's turns, and /help, the
// menus and the answer to an unknown command all read it. A command that
// runs no turn of the model answers at once, beside a running turn (see
// order); one that does waits its turn in the chat's lane.

// An order says how a command runs among a chat's updates.
type order int

const (
	// inLane commands wait behind the chat's running turn, as messages
	// do: they run a turn (/retry) or change the conversation a turn
	// reads and writes (/reset).
	inLane order = iota
	// beside commands need no model: they run at once, beside the
	// chat's running turn, one at a time in order among themselves, and
	// the chat's later turns wait for them, so a turn never starts
	// before a command sent ahead of it ends.
	beside
	// outOfBand commands stop what runs (/cancel): at once, ordered with
	// nothing, and given no conversation (message.key is "").
	outOfBand
)

// A menu says who sees a command in Telegram's command menu.
type menu int

const (
	menuEveryone  menu = iota // every member of a group, and the default
	menuChatOwner             // a private chat's user, a group's administrators
	menuOperator              // ADMIN_USER_IDS, in their private chat
)

// A command is one of the bot's /commands.
type command struct {
	name string
	// about is its entry in the menus; ownerAbout, when set, in the chat
	// owners' menus instead. help is its line in /help ("" leaves it out).
	about, ownerAbout, help string
	menu                    menu
	order                   order
	// run answers it, for a user admit let through (but /cancel, which
	// checks on its own).
	run func(b *Bot, ctx context.Context, m *message)
}

// commands returns the bot's commands, in menu order. (A function, not
// a table of its own, as /help reads it.) MCP prompts, offered as
// commands, join them through (*Bot).command.
func commands() []command {
	return []command{
		{name: "start", about: "What this bot can do", help: "what I can do", order: beside, run: (*Bot).start},
		{name: "help", about: "How to use it", order: beside,
			run: func(b *Bot, ctx context.Context, m *message) { b.say(ctx, m.at, helpText()) }},
		{name: "reset", about: "Start a new conversation", help: "start a new conversation", order: inLane, run: (*Bot).reset},
		{name: "tools", about: "Connected servers and their tools", ownerAbout: "Servers and tools, with this chat's switches",
			help: "connected servers and their tools", order: beside,
			run: func(b *Bot, ctx context.Context, m *message) { b.settings.ShowTools(ctx, m.at) }},
		{name: "usage", about: "Your token usage", help: "your tokens today and this month", order: beside,
			run: func(b *Bot, ctx context.Context, m *message) {
				b.usage.Show(ctx, m.at, m.From.ID, b.isAdmin(m.From.ID))
			}},
		{name: "retry", about: "Answer the last message again", help: "answer my last message again", order: inLane, run: (*Bot).retry},
		{name: "cancel", about: "Stop the running request", help: "stop the running request", order: outOfBand,
			run: (*Bot).handleCancel},
		{name: "prompts", about: "The servers' prompts", help: "the servers' prompts, each a command of its own", order: beside,
			run: func(b *Bot, ctx context.Context, m *message) {
				b.prompts.Show(ctx, m.at, m.CommandArguments())
			}},
		{name: "system", about: "This chat's instructions to the assistant", help: "this chat's instructions to me (group admins change them)",
			menu: menuChatOwner, order: beside,
			run: func(b *Bot, ctx context.Context, m *message) {
				b.settings.System(ctx, m.at, m.key, m.Message, b.isAdmin(m.From.ID))
			}},
		{name: "model", about: "Which model answers this chat", help: "which model answers this chat (group admins switch it)",
			menu: menuChatOwner, order: beside,
			run: func(b *Bot, ctx context.Context, m *message) { b.settings.ShowModel(ctx, m.at, m.key) }},
		{name: "topics", about: "In a forum: a conversation per topic, or one shared", help: "in a group with topics: one conversation per topic, or one shared (group admins change it)",
			menu: menuChatOwner, order: beside,
			run: func(b *Bot, ctx context.Context, m *message) {
				b.settings.Topics(ctx, m.at, m.Message, b.isAdmin(m.From.ID))
			}},
		{name: "connections", about: "Servers you connected your account to", help: "servers you connected your own account to, to disconnect them",
			menu: menuChatOwner, order: beside, run: (*Bot).showConnections},
		{name: "servers", about: "Manage the MCP servers", help: "manage servers (admins)", menu: menuOperator, order: beside,
			run: (*Bot).showServers},
		{name: "stats", about: "Statistics of the last 24 hours and 7 days", help: "the last 24 hours and 7 days (admins)",
			menu: menuOperator, order: beside,
			run: (*Bot).showStats},
	}
}

// command returns the command of that name (any case).
func (b *Bot) command(name string) (command, bool) {
	for _, c := range commands() {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return command{}, false
}

// commandOf reads m as a command: the command, whether it is one of
// ours (ok), and whether it is meant for this bot at all (mine): a
// command for another bot (/start@otherbot) is not.
func (b *Bot) commandOf(m *tgbotapi.Message) (c command, ok, mine bool) {
	if !m.IsCommand() {
		return command{}, false, false
	}
	if _, at, found := strings.Cut(m.CommandWithAt(), "@"); found && !strings.EqualFold(at, b.self.UserName) {
		return command{}, false, false
	}
	c, ok = b.command(m.Command())
	return c, ok, true
}

// runCommand answers a command admit let through; an unknown one gets
// the list of commands, and never reaches the model.
func (b *Bot) runCommand(ctx context.Context, m *message) {
	if c, ok, _ := b.commandOf(m.Message); ok {
		c.run(b, ctx, m)
		return
	}
	if cmd, ok := promptmenu.Find(b.prompts.ChatCommands(ctx, m.Chat.ID), m.Command()); ok {
		b.prompts.Start(ctx, m.at, m.key, m.From.ID, cmd)
		return
	}
	b.say(ctx, m.at, b.unknownText(m.Message))
}

// unknownText answers a command the bot does not have: the commands the
// user may use, in one line.
func (b *Bot) unknownText(m *tgbotapi.Message) string {
	var names []string
	for _, c := range commands() {
		if c.menu != menuOperator || b.isAdmin(m.From.ID) {
			names = append(names, "/"+c.name)
		}
	}
	name := render.Escape(render.Visible(render.Shorten(m.Command(), 32)))
	return "I don't know <code>/" + name + "</code>. My commands: " + strings.Join(names, " ") + ". /help says what each does."
}

// helpText is /help: how to talk to the bot and its commands.
func helpText() string {
	var sb strings.Builder
	sb.WriteString("<b>How to use me</b>\nWrite what you need; I use the connected tools to do it. When I ask a question, tap an option or type your answer. When a tool needs your approval, tap Approve or Deny.\n\n")
	for _, c := range commands() {
		if c.help != "" {
			sb.WriteString("/" + c.name + " – " + c.help + "\n")
		}
	}
	sb.WriteString("\nIn groups, mention me, reply to my message, or use a command.")
	return sb.String()
}

// menuFor lists the commands of the menus at level: everyone's, the chat
// owners' (everyone's and theirs), the operators' (all).
func menuFor(level menu) []tgbotapi.BotCommand {
	var out []tgbotapi.BotCommand
	for _, c := range commands() {
		if c.menu > level {
			continue
		}
		about := c.about
		if level >= menuChatOwner && c.ownerAbout != "" {
			about = c.ownerAbout
		}
		out = append(out, tgbotapi.BotCommand{Command: c.name, Description: about})
	}
	return out
}

// reset answers /reset: a new conversation where it was sent (a chat,
// or a topic with a conversation of its own).
func (b *Bot) reset(ctx context.Context, m *message) {
	if err := b.agent.Reset(ctx, m.key); err != nil {
		b.logger.Error("reset", "chat", m.at, "err", err)
		b.say(ctx, m.at, "Sorry, I could not start a new conversation. Please try again.")
		return
	}
	b.cards.CloseOpen(ctx, m.key, "", "<i>Conversation reset.</i>")
	b.say(ctx, m.at, "Started a new conversation.")
}

func (b *Bot) retry(ctx context.Context, m *message) {
	user := m.From.ID
	// Whatever card is open stays: the agent says to answer it first.
	b.runTurn(ctx, m.at, m.key, user, 0, agent.Request{Caller: caller(user, m.key), Retry: true, Exempt: b.isAdmin(user)}, nil)
}
