package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// declaredPage is what the features app's page declares of itself in the
// browser tests: one origin to fetch from, one to load from, and two
// permissions, of which the operator grants one (APPS_PERMISSIONS).
var declaredPage = map[string]any{
	"csp":         map[string]any{"connectDomains": []any{"https://api.example.com"}, "resourceDomains": []any{"https://cdn.example.com"}},
	"permissions": map[string]any{"clipboardWrite": map[string]any{}, "camera": map[string]any{}},
}

// wantDeclaredCSP is the default policy with declaredPage's origins added
// where MCP Apps maps them, and nothing else.
const wantDeclaredCSP = "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; style-src 'self' 'unsafe-inline' https://cdn.example.com; img-src 'self' data: https://cdn.example.com; font-src https://cdn.example.com; media-src 'self' data: https://cdn.example.com; connect-src https://api.example.com; sandbox allow-scripts"

// fakeTelegramClient stands in for Telegram's app around a Mini App: it
// takes the page's events as Telegram's mobile clients do, and answers
// a request for fullscreen, or to leave it, with the change done.
const fakeTelegramClient = `window.TelegramWebviewProxy = { postEvent: function (type) {
  setTimeout(function () { window.Telegram.WebView.receiveEvent("fullscreen_changed", { is_fullscreen: type === "web_app_request_fullscreen" }); }, 0);
} };`

// Our own app, the features server's page, speaking MCP Apps' side of
// the bridge by hand, opens in a real browser with one bot for all of
// it: its frame comes under the default policy plus exactly the origins
// its page declares, and may use the one permission it asks for that the
// operator grants; its button calling app_refresh, a tool for apps that
// the server does not auto-approve, puts an approval card in the chat
// and runs nothing until Approve is pressed there, and then the result
// shows in the app; its ui/message reaches the chat as the user's words
// and starts a turn. Its host context has the user's language, and the
// display modes Telegram 8.0 has: fullscreen, asked of Telegram, is
// granted and said, and a mode the host or the app lacks is answered
// with the current one.
func TestAppDeclaredCSPInBrowser(t *testing.T) {
	a := openDeclaredApp(t)
	t.Run("declared CSP", func(t *testing.T) {
		if csp := a.b.frameCSP(t); csp != wantDeclaredCSP {
			t.Errorf("the frame came with CSP\n%q\nwant\n%q", csp, wantDeclaredCSP)
		}
	})
	t.Run("permissions", func(t *testing.T) {
		got := a.b.eval(t, a.frame, `["clipboard-write", "camera", "microphone"].map(f => f + "=" + document.featurePolicy.allowsFeature(f)).join(" ")`)
		if want := "clipboard-write=true camera=false microphone=false"; got != want {
			t.Errorf("the app's frame may use %q, want %q: what it asks for and the operator grants", got, want)
		}
	})
	t.Run("approval", a.approval)
	t.Run("display modes and locale", func(t *testing.T) {
		want := "de inline inline,fullscreen fullscreen fullscreen inline fullscreen,inline inline"
		if got := a.b.eval(t, a.frame, displayModes); got != want {
			t.Errorf("the app got %q, want %q", got, want)
		}
	})
	t.Run("message", a.message)
}

// A declaredApp is the features app open in Chromium, its page
// declaring declaredPage, in a bot that grants clipboardWrite and
// microphone, inside a stand-in for Telegram's client.
type declaredApp struct {
	bot    *appsBot
	b      *browser
	frame  string         // the app's frame
	button tgfake.Message // the message of the app's button
}

// openDeclaredApp opens the declaredApp once it shows its call's result.
func openDeclaredApp(t *testing.T) declaredApp {
	t.Helper()
	browserUp := startBrowser(t, chromium(t))
	declared, _ := json.Marshal(declaredPage)
	entry := testenv.FeaturesEntry(t, false, "app_show")
	entry["args"] = []string{"-app-page-ui", string(declared)}
	a := declaredApp{bot: startAppsBotWith(t, "f", "app_show", entry, map[string]string{"APPS_PERMISSIONS": "clipboardWrite,microphone"})}
	a.bot.tg.Text(42, 42, "show me the app")
	button, pageURL := appButton(t, a.bot.tg, 42, 0)
	a.button, a.b = button, browserUp(t)
	a.b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeTelegramClient})
		return err
	}))
	a.b.openSigned(t, pageURL, "")
	a.frame = a.b.appFrame(t)
	testenv.Eventually(t, 30*time.Second, "the app to show the call's result", func() bool { return strings.Contains(a.text(t, "result"), "app shown") })
	return a
}

// text is the text of the app's element id.
func (a declaredApp) text(t *testing.T, id string) string {
	t.Helper()
	return a.b.eval(t, a.frame, `document.getElementById("`+id+`").textContent`)
}

// approval presses the app's Refresh: its call waits, unrun, for the
// card in the chat, and runs once approved.
func (a declaredApp) approval(t *testing.T) {
	a.b.eval(t, a.frame, `document.getElementById("refresh").click(), ""`)
	card, approve, _ := appCard(t, a.bot.tg, 42, a.button.ID)
	if !strings.Contains(card.Plain, "app_refresh") {
		t.Errorf("the card says %q, want the tool", card.Plain)
	}
	if n := toolCalls(t, a.bot, "app_refresh", "ok"); n != 0 || a.text(t, "refreshed") != "" {
		t.Fatalf("before the press, app_refresh ran %v times and the app shows %q", n, a.text(t, "refreshed"))
	}
	a.bot.tg.Press(42, 42, card.ID, approve)
	testenv.Eventually(t, 30*time.Second, "the approved call's result in the app", func() bool { return a.text(t, "refreshed") == "refreshed 1 times" })
	if n := toolCalls(t, a.bot, "app_refresh", "ok"); n != 1 {
		t.Errorf("app_refresh ran %v times, want once", n)
	}
}

// message presses the app's Say hello, once the turn that showed the app
// has answered: the app's words reach the chat, and the model answers
// them.
func (a declaredApp) message(t *testing.T) {
	last := 0
	a.bot.tg.WaitFor(t, 30*time.Second, "the first turn's answer", func() bool {
		for _, m := range a.bot.tg.Messages(42) {
			if m.Plain == "shown" {
				last = m.ID
				return true
			}
		}
		return false
	})
	calls := len(a.bot.model.Calls())
	a.b.eval(t, a.frame, `document.getElementById("say").click(), ""`)
	a.bot.tg.WaitFor(t, 30*time.Second, "the app's message and its turn's answer in the chat", func() bool {
		echoed := false
		for _, m := range a.bot.tg.Messages(42) {
			switch {
			case m.ID <= last:
			case strings.Contains(m.Plain, "From the app") && strings.Contains(m.Plain, "hello from the features app"):
				echoed = true
			case echoed && m.Plain == "shown":
				return true
			}
		}
		return false
	})
	if got := a.text(t, "said"); got != "sent" {
		t.Errorf("the app says %q of its message, want sent", got)
	}
	read := false
	for _, c := range a.bot.model.Calls()[calls:] {
		read = read || strings.Contains(c.Request.Last(), "hello from the features app")
	}
	if !read {
		t.Error("the model never read the app's message")
	}
}

// displayModes is what the features app, from inside its frame, gets of
// its host context and of its requests for display modes, in order: the
// locale and modes of a new ui/initialize declaring both modes, the mode
// granted for fullscreen, for pip, and for inline, the modes the
// host-context-changed notifications said, and the mode granted for
// fullscreen after a ui/initialize that declares only inline.
const displayModes = `(async () => {
  const changed = [];
  addEventListener("message", e => { if (e.data && e.data.method === "ui/notifications/host-context-changed") changed.push(e.data.params.displayMode) });
  const init = modes => ask("ui/initialize", {appInfo: {name: "features", version: "1"}, appCapabilities: {availableDisplayModes: modes}, protocolVersion: "2026-01-26"});
  const mode = async m => (await ask("ui/request-display-mode", {mode: m})).mode;
  const ctx = (await init(["inline", "fullscreen"])).hostContext;
  const out = [ctx.locale, ctx.displayMode, ctx.availableDisplayModes.join(","), await mode("fullscreen"), await mode("pip"), await mode("inline")];
  out.push(changed.join(","));
  await init(["inline"]);
  out.push(await mode("fullscreen"));
  return out.join(" ");
})()`
