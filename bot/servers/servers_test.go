package servers_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/servers"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// catalog is a Hub that only shows a catalog.
type catalog mcpgram.Catalog

func (c catalog) Catalog() mcpgram.Catalog                     { return mcpgram.Catalog(c) }
func (catalog) SetEnabled(context.Context, string, bool) error { return nil }
func (catalog) Restart(context.Context, string) error          { return nil }

var hostile = catalog{Servers: []mcpgram.ServerInfo{
	{Name: "bad\u202Eexe", Status: mcpgram.StatusFailed, Error: "invalid settings: \"bad\\u202eexe\" is not a valid name", LastStderr: "boom\u200B\x1b[2J"},
	{Name: "files", Status: mcpgram.StatusRunning,
		Tools: []mcpgram.Tool{{Name: "read", Description: "Reads \u2066a file\u2069 <b>"}},
		Notes: []string{`refused a tool: "lookup\n\n# Instructions" is not a valid name: use 1 to 128 of A-Z a-z 0-9 _ - .`, `cut the description of tool "read" from 102400 to 2000 characters`}},
}}

// plain checks that Telegram takes html and returns what it shows.
func plain(t *testing.T, html string) string {
	t.Helper()
	p, err := tgfake.ParseHTML(html)
	if err != nil {
		t.Fatalf("Telegram would reject %q: %v", html, err)
	}
	return p
}

// noHidden fails t if s shows a direction override, a zero-width space or
// an escape raw.
func noHidden(t *testing.T, what, s string) {
	t.Helper()
	if strings.ContainsAny(s, "\u202E\u2066\u2069\u200B\x1b") {
		t.Errorf("%s shows a hidden character raw: %q", what, s)
	}
}

// /servers shows every name, error and note of a server visibly, and the
// notes of what the hub refused or cut.
func TestServersScreenShowsNotesVisibly(t *testing.T) {
	sc := &servers.Screen{Hub: hostile}
	html, kb := sc.View(0)
	p := plain(t, html)
	noHidden(t, "/servers", p)
	for _, want := range []string{`bad\u202Eexe: failed`, `boom\u200B\u001B[2J`, "files: running, 1 tool",
		`refused a tool: "lookup\n\n# Instructions" is not a valid name`, `cut the description of tool "read"`} {
		if !strings.Contains(p, want) {
			t.Errorf("/servers lacks %q:\n%s", want, p)
		}
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			noHidden(t, "a /servers button", b.Text)
		}
	}
}

// /tools shows names and descriptions visibly.
func TestToolsShowsVisibly(t *testing.T) {
	html, kb := servers.ChatView(mcpgram.Catalog(hostile), nil)
	p := plain(t, html)
	noHidden(t, "/tools", p)
	if !strings.Contains(p, `Reads \u2066a file\u2069 <b>`) || !strings.Contains(p, `bad\u202Eexe: failed`) {
		t.Errorf("/tools = %q", p)
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			noHidden(t, "a /tools button", b.Text)
		}
	}
}

// /servers says plainly which servers run outside a sandbox and why; a sandboxed
// server needs no word, nor does a remote one, and a server that may not
// start without its sandbox says so once, in its failure.
func TestViewSaysWhatIsNotSandboxed(t *testing.T) {
	reason := "this machine offers no sandbox (bubblewrap: <not installed>; Landlock: off)"
	required := "not started: its sandbox cannot be had: bubblewrap: not installed"
	sc := &servers.Screen{Hub: catalog{Servers: []mcpgram.ServerInfo{
		{Name: "boxed", Status: mcpgram.StatusRunning, Sandbox: "bubblewrap"},
		{Name: "open", Status: mcpgram.StatusRunning, NotSandboxed: reason},
		{Name: "remote", Status: mcpgram.StatusRunning},
		{Name: "strict", Status: mcpgram.StatusFailed, Error: required, NotSandboxed: required},
	}}}
	html, _ := sc.View(0)
	blocks := map[string]string{}
	for _, b := range strings.Split(html, "\n\n")[1:] {
		name := b[strings.Index(b, "<b>")+3 : strings.Index(b, "</b>")]
		blocks[name] = b
	}
	for name, want := range map[string]string{
		"open":   "⚠️ <i>Not sandboxed:</i> this machine offers no sandbox (bubblewrap: &lt;not installed&gt;; Landlock: off)",
		"strict": "failed: " + required,
	} {
		if !strings.Contains(blocks[name], want) {
			t.Errorf("%s: %q lacks %q", name, blocks[name], want)
		}
	}
	for _, name := range []string{"boxed", "remote", "strict"} {
		if strings.Contains(blocks[name], "⚠️") {
			t.Errorf("%s: %q warns, want no word on its sandbox", name, blocks[name])
		}
	}
}

// /tools shows a tool's title, where its server gives one, beside its
// name.
func TestChatViewShowsTitles(t *testing.T) {
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{{Name: "f", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
		{Name: "index", Title: "Index the <files>", Description: "Indexes."}, {Name: "plain", Title: "plain"},
	}}}}
	html, _ := servers.ChatView(cat, nil)
	if !strings.Contains(html, "<code>index</code> <b>Index the &lt;files&gt;</b> – Indexes.") || strings.Contains(html, "<b>plain</b>") {
		t.Errorf("view %q", html)
	}
}

// /servers says why a server is down in mcp list's words, the cause and
// its fix, with Sign in where a sign-in helps: a remote server that needs
// one, one whose kept sign-in does not open, one that cannot be reached
// (retried), and a local one that crashed and is being restarted.
func TestViewSaysWhyServersAreDown(t *testing.T) {
	down := []mcpgram.ServerInfo{
		{Name: "tracker", Status: mcpgram.StatusFailed, Cause: mcpgram.CauseSignIn, SignIn: true, Error: "needs sign-in: run mcpgram mcp login tracker"},
		{Name: "notes", Status: mcpgram.StatusFailed, Cause: mcpgram.CauseKey, SignIn: true, Error: "sign-in unusable: OAUTH_KEY changed? Set it back, or run mcpgram mcp login notes"},
		{Name: "wiki", Status: mcpgram.StatusRestarting, Cause: mcpgram.CauseUnreachable, Error: "unreachable: connection refused (10.0.0.7:443)"},
		{Name: "files", Status: mcpgram.StatusRestarting, Error: "exited with code 1"},
	}
	sc := &servers.Screen{Hub: catalog{Servers: down}, SignIn: func(context.Context, *tgbotapi.CallbackQuery, telegram.Place, string) {}}
	html, kb := sc.View(0)
	p := plain(t, html)
	for i, s := range down {
		if want := "🔴 " + s.Name + ": " + s.Problem(); !strings.Contains(p, want) {
			t.Errorf("/servers lacks %q:\n%s", want, p)
		}
		var labels []string
		for _, b := range kb.InlineKeyboard[i] {
			labels = append(labels, b.Text)
		}
		if got, want := slices.Contains(labels, "🔑 Sign in "+s.Name), s.SignIn; got != want {
			t.Errorf("%s's buttons %q: Sign in shown %v, want %v", s.Name, labels, got, want)
		}
	}
	for _, want := range []string{"tracker: needs sign-in: run mcpgram mcp login tracker", "wiki: unreachable: connection refused (10.0.0.7:443)", "files: restarting: exited with code 1"} {
		if !strings.Contains(p, want) {
			t.Errorf("/servers lacks %q:\n%s", want, p)
		}
	}
}
