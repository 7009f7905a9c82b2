package bot_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// waitCommands waits until the menu of scope offers command.
func waitCommands(t *testing.T, f *tgfake.Server, scope string, chat int64, command string) {
	t.Helper()
	f.WaitFor(t, 30*time.Second, "the menu "+scope+" to offer /"+command, func() bool {
		cmds := f.ScopeCommands(scope)
		if chat != 0 {
			cmds = f.Commands(chat)
		}
		for _, c := range cmds {
			if c.Command == command {
				return true
			}
		}
		return false
	})
}

var commandSyntax = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// A server's prompt in Telegram: /prompts lists it, the menu offers it;
// /greet asks its arguments on a card with the server's suggestions as
// buttons; Submit sends the prompt, which the chat sees quoted and the
// model gets as the user's message, kept in the conversation.
func TestPromptInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(func(o *bot.Options) { o.MenuInterval = 20 * time.Millisecond })
	f := s.fake
	waitCommands(t, f, "all_private_chats", 0, "greet")
	for _, c := range f.ScopeCommands("all_private_chats") {
		if !commandSyntax.MatchString(c.Command) {
			t.Errorf("menu command %q is not valid for Telegram", c.Command)
		}
	}
	f.Text(alice, alice, "/prompts")
	list := waitText(t, f, alice, "/greet – Greet someone")
	for _, absent := range []string{"bad", "nnnn"} {
		if strings.Contains(list.Plain, absent) {
			t.Errorf("/prompts lists a refused prompt (%q):\n%s", absent, list.Plain)
		}
	}

	f.Text(alice, alice, "/greet")
	c := card(t, f, alice, "Prompt greet of f")
	if !strings.Contains(c.Plain, "choose a suggestion") {
		t.Errorf("the card offers no suggestions:\n%s", c.Plain)
	}
	if ans := press(t, f, alice, bob, c, "💡 Grace"); !ans.ShowAlert || !strings.Contains(ans.Text, "only they can fill it in") {
		t.Errorf("Bob's press: %+v", ans)
	}
	press(t, f, alice, alice, c, "💡 Grace")
	c = edited(t, f, alice, c, "✔️ who: Grace")
	f.Text(alice, alice, "with a bow")
	c = edited(t, f, alice, c, "✔️ mood: with a bow")
	press(t, f, alice, alice, c, "✅ Submit")
	edited(t, f, alice, c, "Sent.")
	waitText(t, f, alice, "Sent the prompt greet of f:\nPlease greet Grace, with a bow.")
	waitText(t, f, alice, "Hello: Please greet Grace, with a bow.")

	f.Text(alice, alice, "and again")
	waitText(t, f, alice, "Hello: and again")
	calls := s.model.Calls()
	var history []string
	for _, m := range calls[len(calls)-1].Request.Messages {
		history = append(history, m.Role+": "+m.Content)
	}
	if !strings.Contains(strings.Join(history, "\n"), "user: Please greet Grace, with a bow.") {
		t.Errorf("the prompt is not the turn's user message in the history:\n%s", strings.Join(history, "\n"))
	}
}

// A prompt without arguments is sent at once, images and embedded
// resources with it; a huge one is cut like a tool's output; one whose
// prompts/get fails is a plain sorry; a server turned off in /tools takes
// its prompts out of the chat's menu and commands.
func TestPromptsHostileInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "/picture")
	waitText(t, f, alice, "Sent the prompt picture of f:\nDescribe this picture.\n\nResource notes://style:\nBe brief.\n🖼 1 image")

	f.Text(alice, alice, "/huge")
	waitText(t, f, alice, "Sent the prompt huge of f")
	var huge string
	f.WaitFor(t, 30*time.Second, "the model to get the huge prompt", func() bool {
		for _, c := range s.model.Calls() {
			if last := c.Request.Last(); strings.HasPrefix(last, "xxxx") {
				huge = last
				return true
			}
		}
		return false
	})
	if len(huge) > 40<<10 || !strings.Contains(huge, "The prompt was cut at") {
		t.Errorf("the model got %d bytes of the huge prompt, want at most the output cap and a note", len(huge))
	}
	waitText(t, f, alice, "The answer goes on")

	f.Text(alice, alice, "/broken")
	waitText(t, f, alice, "Sorry, f could not give the prompt broken.")
	for _, m := range f.Messages(alice) {
		if strings.Contains(m.Plain, "on fire") {
			t.Errorf("the server's error reached the user: %q", m.Plain)
		}
	}

	f.Text(alice, alice, "/flood")
	c := card(t, f, alice, "Prompt flood of f")
	if n := strings.Count(strings.Join(c.Buttons(), "\n"), "💡"); n != 5 {
		t.Errorf("%d suggestion buttons, want 5: %q", n, c.Buttons())
	}
	for _, b := range c.Buttons() {
		if _, data, _ := strings.Cut(b, "="); len(data) > 64 {
			t.Errorf("button data %q is over 64 bytes", data)
		}
	}
	// One way out: for a prompt, declining and cancelling are the same.
	if b := strings.Join(c.Buttons(), "\n"); strings.Contains(b, "Decline") || !strings.Contains(b, "✖️ Cancel=") || !strings.Contains(b, "✅ Submit=") {
		t.Errorf("the prompt's card buttons %q: want Submit and Cancel, no Decline", c.Buttons())
	}
	press(t, f, alice, alice, c, "✖️ Cancel")
	edited(t, f, alice, c, "Cancelled.")

	f.Text(alice, alice, "/tools")
	tools := card(t, f, alice, "add_prompt")
	press(t, f, alice, alice, tools, "Turn off")
	f.WaitFor(t, 30*time.Second, "the chat's menu without greet", func() bool {
		cmds := f.Commands(alice)
		return len(cmds) > 0 && !strings.Contains(commandNames(cmds), "greet")
	})
	// Its command is then one the chat does not have: answered, never
	// sent to the model.
	calls := len(s.model.Calls())
	f.Text(alice, alice, "/greet")
	waitText(t, f, alice, "I don't know /greet.")
	if n := len(s.model.Calls()); n != calls {
		t.Errorf("the model was called for the prompt of a server turned off in the chat")
	}
}

func commandNames(cmds []tgbotapi.BotCommand) string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Command)
	}
	return strings.Join(names, " ")
}

// A chat that turned a server off in /tools has menus of its own, which
// follow the catalog's prompts as every chat's do: when another server's
// prompts go (the operator stops it) or come back, the chat's menus
// change with them, in a private chat and in a group (its members' and
// its administrators'). With every server on again, the chat's own menus
// are deleted, and it shows every chat's.
func TestChatMenusFollowThePrompts(t *testing.T) {
	s := newServersStack(t, map[string]any{"f": testenv.FeaturesEntry(t, false), "g": testenv.FeaturesEntry(t, false)}, formModel, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, nil)
	const group = -88
	// The group's switches were set before this start: its menus are set
	// at the start too.
	if err := s.db.SetChatServersOff(context.Background(), strconv.Itoa(group), []string{"f"}); err != nil {
		t.Fatal(err)
	}
	f := s.fake
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "hello all"}) // the chat exists for Telegram
	s.start(func(o *bot.Options) { o.MenuInterval = 20 * time.Millisecond })
	waitCommands(t, f, "all_private_chats", 0, "f_greet")

	f.Text(alice, alice, "/tools")
	press(t, f, alice, alice, card(t, f, alice, "add_prompt"), "Turn off f here")
	menus := func(what string, want func(names []string) bool) {
		t.Helper()
		f.WaitFor(t, 30*time.Second, what, func() bool {
			for _, cmds := range [][]tgbotapi.BotCommand{f.Commands(alice), f.Commands(group), f.ChatAdminCommands(group)} {
				if names := strings.Fields(commandNames(cmds)); !slices.Contains(names, "tools") || !want(names) {
					return false
				}
			}
			return true
		})
	}
	menus("the chats' menus with g's prompts, not f's", func(names []string) bool {
		return slices.Contains(names, "g_greet") && !slices.Contains(names, "greet") && !slices.Contains(names, "f_greet")
	})

	if err := s.hub.SetEnabled(context.Background(), "g", false); err != nil {
		t.Fatal(err)
	}
	waitCommands(t, f, "all_private_chats", 0, "greet") // f's, no longer clashing
	menus("the chats' menus without g's prompts", func(names []string) bool {
		return !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "greet") })
	})
	if err := s.hub.SetEnabled(context.Background(), "g", true); err != nil {
		t.Fatal(err)
	}
	menus("the chats' menus with g's prompts again", func(names []string) bool { return slices.Contains(names, "g_greet") })

	f.Text(alice, alice, "/tools")
	press(t, f, alice, alice, card(t, f, alice, "off in this chat"), "Turn on f here")
	f.WaitFor(t, 30*time.Second, "alice's own menu deleted", func() bool { return len(f.Commands(alice)) == 0 })
	if n := len(f.Calls("deleteMyCommands")); n != 1 {
		t.Errorf("deleteMyCommands called %d times, want once", n)
	}
}
