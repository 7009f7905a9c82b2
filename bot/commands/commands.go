// Package commands is the bot's table of /commands: what each does, who
// sees it in which of Telegram's command menus, and how it is ordered with
// a chat's turns. /help, the menus, the answer to an unknown command and
// the names no server's prompt may take are all read from it; the bot
// fills it with its handlers. A command that runs no turn of the model
// answers at once, beside a running turn (see Order); one that does waits
// its turn in the chat's lane. /start's greeting is here too.
package commands

import (
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
)

// An Order says how a command runs among a chat's updates.
type Order int

const (
	// InLane commands wait behind the chat's running turn, as messages
	// do: they run a turn (/retry) or change the conversation a turn
	// reads and writes (/reset).
	InLane Order = iota
	// Beside commands need no model: they run at once, beside the
	// chat's running turn, one at a time in order among themselves, and
	// the chat's later turns wait for them, so a turn never starts
	// before a command sent ahead of it ends.
	Beside
	// OutOfBand commands stop what runs (/cancel): at once, ordered with
	// nothing, and given no conversation.
	OutOfBand
)

// A Menu says who sees a command in Telegram's command menu.
type Menu int

const (
	Everyone  Menu = iota // every member of a group, and the default
	ChatOwner             // a private chat's user, a group's administrators
	Operator              // ADMIN_USER_IDS, in their private chat
)

// A Command is one of the bot's /commands, answered by Run, a handler of
// the bot's (H).
type Command[H any] struct {
	Name string
	// About is its entry in the menus; OwnerAbout, when set, in the chat
	// owners' menus instead. Help is its line in /help ("" leaves it out).
	About, OwnerAbout, Help string
	Menu                    Menu
	Order                   Order
	Run                     H
}

// A Table is the bot's commands, in menu order.
type Table[H any] []Command[H]

// Find returns the command of that name (any case).
func (t Table[H]) Find(name string) (Command[H], bool) {
	for _, c := range t {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Command[H]{}, false
}

// Of reads m as a command to the bot named self: the command, whether it
// is one of t (ok), and whether it is meant for this bot at all (mine): a
// command for another bot (/start@otherbot) is not.
func (t Table[H]) Of(m *tgbotapi.Message, self string) (c Command[H], ok, mine bool) {
	if !m.IsCommand() {
		return Command[H]{}, false, false
	}
	if _, at, found := strings.Cut(m.CommandWithAt(), "@"); found && !strings.EqualFold(at, self) {
		return Command[H]{}, false, false
	}
	c, ok = t.Find(m.Command())
	return c, ok, true
}

// Names are the commands' names, which no server's prompt may take.
func (t Table[H]) Names() []string {
	var names []string
	for _, c := range t {
		names = append(names, c.Name)
	}
	return names
}

// Unknown answers name, a command the bot does not have: the commands
// the user may use (an operator's too, for one), in one line.
func (t Table[H]) Unknown(name string, operator bool) string {
	var names []string
	for _, c := range t {
		if c.Menu != Operator || operator {
			names = append(names, "/"+c.Name)
		}
	}
	name = render.Escape(render.Visible(render.Shorten(name, 32)))
	return "I don't know <code>/" + name + "</code>. My commands: " + strings.Join(names, " ") + ". /help says what each does."
}

// Help is /help: how to talk to the bot and its commands.
func (t Table[H]) Help() string {
	var sb strings.Builder
	sb.WriteString("<b>How to use me</b>\nWrite what you need; I use the connected tools to do it. When I ask a question, tap an option or type your answer. When a tool needs your approval, tap Approve or Deny.\n\n")
	for _, c := range t {
		if c.Help != "" {
			sb.WriteString("/" + c.Name + " – " + c.Help + "\n")
		}
	}
	sb.WriteString("\nIn groups, mention me, reply to my message, or use a command.")
	return sb.String()
}

// MenuFor lists the commands of the menus at level: everyone's, the chat
// owners' (everyone's and theirs), the operators' (all).
func (t Table[H]) MenuFor(level Menu) []tgbotapi.BotCommand {
	var out []tgbotapi.BotCommand
	for _, c := range t {
		if c.Menu > level {
			continue
		}
		about := c.About
		if level >= ChatOwner && c.OwnerAbout != "" {
			about = c.OwnerAbout
		}
		out = append(out, tgbotapi.BotCommand{Command: c.Name, Description: about})
	}
	return out
}

// Greeting is /start's: what the bot can do with the servers of cat, and
// user's id, which its operator lists in ALLOWED_USER_IDS and
// ADMIN_USER_IDS.
func Greeting(cat mcpgram.Catalog, user int64) string {
	var sb strings.Builder
	sb.WriteString("👋 <b>Hi! I am an assistant that acts through tools.</b>\nAsk me anything; I call tools when they help.\n\n")
	running := cat.Running()
	if len(running) == 0 {
		sb.WriteString("No tool servers are connected right now.")
	} else {
		sb.WriteString("Connected:\n")
		for _, s := range running {
			fmt.Fprintf(&sb, "• <b>%s</b> (%s)\n", render.Escape(s.Name), render.Count(len(s.Tools), "tool"))
		}
	}
	sb.WriteString("\n/help lists the commands.")
	fmt.Fprintf(&sb, "\n\nYour Telegram user id is <code>%d</code> (what the bot's operator lists in ALLOWED_USER_IDS and ADMIN_USER_IDS).", user)
	return sb.String()
}
