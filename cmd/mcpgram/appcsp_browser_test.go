package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// fakeTelegramClient stands in for Telegram's app around a Mini App: it
// takes the page's events as Telegram's mobile clients do, and answers
// a request for fullscreen, or to leave it, with the change done.
const fakeTelegramClient = `window.TelegramWebviewProxy = { postEvent: function (type) {
  setTimeout(function () { window.Telegram.WebView.receiveEvent("fullscreen_changed", { is_fullscreen: type === "web_app_request_fullscreen" }); }, 0);
} };`

// Our own app, the features server's page, speaking MCP Apps' side of
// the bridge by hand, opens in a real browser with one bot for all of
// it, its page served at its server's own origin under a wildcard
// APPS_ORIGIN (startOriginBot): it runs in that origin, apart from the
// host page's, whose DOM, cookies and endpoints it cannot reach; its
// frame comes under the default policy plus exactly the origins its page
// declares that are not the bot's, ui/initialize says which, and the
// host page draws the border it prefers; it may use the one permission
// it asks for that the operator grants; its button calling app_refresh,
// a tool for apps that the server does not auto-approve, puts an
// approval card in the chat and runs nothing until Approve is pressed
// there, and then the result shows in the app; its ui/message reaches
// the chat as the user's words and starts a turn. Its host context has
// the user's language, and the display modes Telegram 8.0 has:
// fullscreen, asked of Telegram, is granted and said, and a mode the
// host or the app lacks is answered with the current one.
func TestAppDeclaredCSPInBrowser(t *testing.T) {
	a := openDeclaredApp(t)
	t.Run("declared CSP", func(t *testing.T) {
		if csp := a.b.frameCSP(t); csp != wantOriginCSP {
			t.Errorf("the frame came with CSP\n%q\nwant\n%q", csp, wantOriginCSP)
		}
		got := a.b.eval(t, a.frame, `ask("ui/initialize", {appInfo: {name: "features", version: "1"}, appCapabilities: {}, protocolVersion: "2026-01-26"}).then(r => JSON.stringify(r.hostCapabilities.sandbox))`)
		if want := `{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}}}`; got != want {
			t.Errorf("ui/initialize says the sandbox is %s, want %s", got, want)
		}
	})
	t.Run("origin", a.origin)
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

// A declaredApp is the features app of startOriginBot open in Chromium,
// inside a stand-in for Telegram's client, with a cookie of the host's.
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
	a := declaredApp{bot: startOriginBot(t)}
	a.bot.tg.Text(42, 42, "show me the app")
	button, pageURL := appButton(t, a.bot.tg, 42, 0)
	a.button, a.b = button, browserUp(t)
	a.b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		_, err := cdp.Call(ctx, target, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeTelegramClient})
		return err
	}), chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		secure := true
		_, err := cdp.Call(ctx, target, network.SetCookie, network.SetCookieParams{Name: "host_secret", Value: "s3cret", URL: "https://bot.test:" + a.bot.port, Secure: &secure})
		return err
	}))
	a.b.openSigned(t, pageURL, "")
	a.frame = a.b.appFrame(t)
	testenv.Eventually(t, 30*time.Second, "the app to show the call's result", func() bool { return strings.Contains(a.text(t, "result"), "app shown") })
	return a
}

// origin checks from inside the frame that the app runs in its server's
// own origin, whose DOM, cookies and endpoints are not the host page's
// and the bot's, and from the host page that the frame has the border
// the app prefers.
func (a declaredApp) origin(t *testing.T) {
	want := "https://" + (mcpgram.AppsOrigin{}).Label("f") + ".apps.test:" + a.bot.port
	if got := a.b.eval(t, a.frame, `location.origin`); got != want {
		t.Errorf("the app runs in origin %q, want its server's, %q", got, want)
	}
	bot := "https://bot.test:" + a.bot.port
	probes := map[string]struct{ expr, want string }{
		"the host page's DOM": {`(() => { try { return "reached: " + parent.document.title } catch (e) { return "blocked: " + e.name } })()`, "blocked: SecurityError"},
		"the host's cookies":  {`document.cookie.includes("host_secret") ? "read" : "unread"`, "unread"},
		"mcpgram's bridge":    {`fetch("` + bot + `/apps/x/rpc", {method: "POST", body: "{}"}).then(r => "reached: " + r.status, e => "blocked: " + e.name)`, "blocked: TypeError"},
		"the bot's /metrics":  {`fetch("` + bot + `/metrics").then(r => "reached: " + r.status, e => "blocked: " + e.name)`, "blocked: TypeError"},
		"its own origin's":    {`fetch("/metrics").then(r => "reached: " + r.status, e => "blocked: " + e.name)`, "blocked: TypeError"},
		"its own storage":     {`(localStorage.setItem("k", "v"), localStorage.getItem("k"))`, "v"},
	}
	for name, p := range probes {
		if got := a.b.eval(t, a.frame, p.expr); got != p.want {
			t.Errorf("from the app's frame, %s: %q, want %q", name, got, p.want)
		}
	}
	if got := a.b.eval(t, a.b.mainFrame(t), `getComputedStyle(document.getElementById("app")).borderTopStyle`); got != "solid" {
		t.Errorf("the frame's border is %q, want the solid one the app prefers", got)
	}
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
	// The turn may end before the bridge's answer reaches the app.
	testenv.Eventually(t, 30*time.Second, "the app to say its message was sent", func() bool { return a.text(t, "said") == "sent" })
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
