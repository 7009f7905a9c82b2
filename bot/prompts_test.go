package bot_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/internal/tgfake"
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
