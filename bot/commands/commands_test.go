package commands_test

import (
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/commands"
)

var table = commands.Table[int]{
	{Name: "start", About: "Start", Help: "what I can do", Order: commands.Beside, Run: 1},
	{Name: "reset", About: "Reset", Help: "a new conversation", Run: 2},
	{Name: "tools", About: "Tools", OwnerAbout: "Tools, with switches", Menu: commands.ChatOwner, Order: commands.Beside, Run: 3},
	{Name: "stats", About: "Stats", Help: "statistics (admins)", Menu: commands.Operator, Order: commands.Beside, Run: 4},
}

// command is a message of text, a command when it starts with one.
func command(text string) *tgbotapi.Message {
	m := &tgbotapi.Message{Text: text}
	if name, _, _ := strings.Cut(text, " "); strings.HasPrefix(name, "/") {
		m.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Length: len(name)}}
	}
	return m
}

func TestOf(t *testing.T) {
	for _, c := range []struct {
		text     string
		run      int
		ok, mine bool
	}{
		{"/reset", 2, true, true},
		{"/Reset now", 2, true, true},
		{"/reset@mcpgram_bot", 2, true, true},
		{"/reset@MCPgram_Bot", 2, true, true},
		{"/reset@otherbot", 0, false, false},
		{"/frobnicate", 0, false, true},
		{"reset", 0, false, false},
	} {
		got, ok, mine := table.Of(command(c.text), "mcpgram_bot")
		if got.Run != c.run || ok != c.ok || mine != c.mine {
			t.Errorf("Of(%q) = %d, %v, %v; want %d, %v, %v", c.text, got.Run, ok, mine, c.run, c.ok, c.mine)
		}
	}
}

func TestMenus(t *testing.T) {
	menu := func(level commands.Menu) string {
		var out []string
		for _, c := range table.MenuFor(level) {
			out = append(out, c.Command+"="+c.Description)
		}
		return strings.Join(out, " ")
	}
	for level, want := range map[commands.Menu]string{
		commands.Everyone:  "start=Start reset=Reset",
		commands.ChatOwner: "start=Start reset=Reset tools=Tools, with switches",
		commands.Operator:  "start=Start reset=Reset tools=Tools, with switches stats=Stats",
	} {
		if got := menu(level); got != want {
			t.Errorf("MenuFor(%d) = %q, want %q", level, got, want)
		}
	}
	if got, want := strings.Join(table.Names(), " "), "start reset tools stats"; got != want {
		t.Errorf("Names = %q, want %q", got, want)
	}
}

func TestTexts(t *testing.T) {
	if got, want := table.Unknown("frob<b>", false), "I don't know <code>/frob&lt;b&gt;</code>. My commands: /start /reset /tools. /help says what each does."; got != want {
		t.Errorf("Unknown = %q, want %q", got, want)
	}
	if got := table.Unknown("frob", true); !strings.Contains(got, "/tools /stats.") {
		t.Errorf("an operator's Unknown = %q, want the operators' commands too", got)
	}
	help := table.Help()
	for _, want := range []string{"/start – what I can do\n", "/reset – a new conversation\n", "/stats – statistics (admins)\n"} {
		if !strings.Contains(help, want) {
			t.Errorf("Help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "/tools") {
		t.Errorf("Help lists /tools, which has no help line:\n%s", help)
	}
	cat := mcpgram.Catalog{}
	if got := commands.Greeting(cat, 42); !strings.Contains(got, "No tool servers are connected right now.") || !strings.Contains(got, "<code>42</code>") {
		t.Errorf("Greeting without servers = %q", got)
	}
}
