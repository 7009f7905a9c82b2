package bot

import (
	"context"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/commands"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
)

// The bot's /commands are a table of package commands, which the bot
// fills with its handlers here.

// A handler answers a command, for a user admit let through (but
// /cancel, which checks on its own).
type handler func(b *Bot, ctx context.Context, m *message)

// commandTable returns the bot's commands, in menu order. (A function,
// not a table of its own, as /help reads it.) MCP prompts, offered as
// commands, join them in runCommand.
func commandTable() commands.Table[handler] {
	return commands.Table[handler]{
		{Name: "start", About: "What this bot can do", Help: "what I can do", Order: commands.Beside, Run: (*Bot).start},
		{Name: "help", About: "How to use it", Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) { b.say(ctx, m.at, commandTable().Help()) }},
		{Name: "reset", About: "Start a new conversation", Help: "start a new conversation", Order: commands.InLane, Run: (*Bot).reset},
		{Name: "tools", About: "Connected servers and their tools", OwnerAbout: "Servers and tools, with this chat's switches",
			Help: "connected servers and their tools", Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) { b.settings.ShowTools(ctx, m.at) }},
		{Name: "usage", About: "Your token usage", Help: "your tokens today and this month", Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) {
				b.usage.Show(ctx, m.at, m.From.ID, b.isAdmin(m.From.ID))
			}},
		{Name: "retry", About: "Answer the last message again", Help: "answer my last message again", Order: commands.InLane, Run: (*Bot).retry},
		{Name: "cancel", About: "Stop the running request", Help: "stop the running request", Order: commands.OutOfBand,
			Run: (*Bot).handleCancel},
		{Name: "prompts", About: "The servers' prompts", Help: "the servers' prompts, each a command of its own", Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) {
				b.prompts.Show(ctx, m.at, m.CommandArguments())
			}},
		{Name: "tasks", About: "Tasks running in the background", Help: "this chat's tasks running in the background, each with its Stop button",
			Order: commands.Beside, Run: func(b *Bot, ctx context.Context, m *message) { b.tasks.List(ctx, m.at, m.key) }},
		{Name: "system", About: "This chat's instructions to the assistant", Help: "this chat's instructions to me (group admins change them)",
			Menu: commands.ChatOwner, Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) {
				b.settings.System(ctx, m.at, m.key, m.Message, b.isAdmin(m.From.ID))
			}},
		{Name: "model", About: "Which model answers this chat", Help: "which model answers this chat (group admins switch it)",
			Menu: commands.ChatOwner, Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) { b.settings.ShowModel(ctx, m.at, m.key) }},
		{Name: "topics", About: "In a forum: a conversation per topic, or one shared", Help: "in a group with topics: one conversation per topic, or one shared (group admins change it)",
			Menu: commands.ChatOwner, Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) {
				b.settings.Topics(ctx, m.at, m.Message, b.isAdmin(m.From.ID))
			}},
		{Name: "connections", About: "Servers you connected your account to", Help: "servers you connected your own account to, to disconnect them",
			Menu: commands.ChatOwner, Order: commands.Beside,
			Run: func(b *Bot, ctx context.Context, m *message) {
				b.conns.Command(ctx, m.at, m.From.ID, m.Chat.IsPrivate(), b.isAdmin(m.From.ID))
			}},
		{Name: "servers", About: "Manage the MCP servers", Help: "manage servers (admins)", Menu: commands.Operator, Order: commands.Beside,
			Run: (*Bot).showServers},
		{Name: "stats", About: "Statistics of the last 24 hours and 7 days", Help: "the last 24 hours and 7 days (admins)",
			Menu: commands.Operator, Order: commands.Beside,
			Run: (*Bot).showStats},
	}
}

// runCommand answers a command admit let through; an unknown one gets
// the list of commands, and never reaches the model.
func (b *Bot) runCommand(ctx context.Context, m *message) {
	if c, ok, _ := commandTable().Of(m.Message, b.self.UserName); ok {
		c.Run(b, ctx, m)
		return
	}
	if cmd, ok := promptmenu.Find(b.prompts.ChatCommands(ctx, m.Chat.ID), m.Command()); ok {
		b.prompts.Start(ctx, m.at, m.key, m.From.ID, cmd)
		return
	}
	b.say(ctx, m.at, commandTable().Unknown(m.Command(), b.isAdmin(m.From.ID)))
}

// start answers /start: the greeting, or, with a deep link's payload,
// what the link asks. A group's form or sign-in is answered in its user's
// private chat (see package connect): the link on the group's card sends
// /start with the form's id.
func (b *Bot) start(ctx context.Context, m *message) {
	if payload := m.CommandArguments(); payload != "" {
		b.signIns.OpenPrivately(ctx, m.at, m.key, m.From.ID, m.Chat.IsPrivate(), payload)
		return
	}
	b.say(ctx, m.at, commands.Greeting(b.hub.Catalog(), m.From.ID))
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
