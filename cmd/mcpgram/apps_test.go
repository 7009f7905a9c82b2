package main_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// mcp list shows the operator every tool of a server, an MCP App's own
// tool marked, as the model is never shown it.
func TestMCPListMarksAppTools(t *testing.T) {
	path := settings(t, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	out, _, err := run(t, nil, "", "--mcp-settings", path, "mcp", "list")
	if err != nil {
		t.Fatalf("mcp list: %v\n%s", err, out)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  ") {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if got := lines["app_refresh"]; !strings.HasPrefix(got, "(app only) Refreshes the features app's view") {
		t.Errorf("app_refresh's line says %q; want it marked app only:\n%s", got, out)
	}
	if got := lines["app_show"]; !strings.HasPrefix(got, "Shows the features app") {
		t.Errorf("app_show's line says %q; want it unmarked:\n%s", got, out)
	}
}

// appsBot is a bot that shows MCP Apps: PUBLIC_URL is https (a TLS proxy
// in front of HTTP_LISTEN, as in production), and server f (the features
// test server) has app_show, a tool with an app, and app_refresh, the
// app's own, both auto-approved; also model_only, which apps may not
// call, and asked, which they may but is not auto-approved.
type appsBot struct {
	tg        *tgfake.Server
	publicURL string
	listen    string // HTTP_LISTEN, for /metrics
	port      string // the proxy's, which serves every host name
	browser   *http.Client
	logs      *testenv.Buffer
	model     *llmfake.Server
	env       env
	settings  string // the path of its mcp-settings.json
	stop      func()
}

// start runs the bot, stopped at the test's end or by stop, once.
func (b *appsBot) start(t *testing.T) {
	t.Helper()
	logs, stop := startRun(t, b.env, b.settings)
	b.logs, b.stop = logs, sync.OnceFunc(stop)
	t.Cleanup(b.stop)
}

// restart stops the bot and runs it again on the same database.
func (b *appsBot) restart(t *testing.T) {
	t.Helper()
	b.stop()
	b.start(t)
}

// startAppsBot starts an appsBot whose model calls f's app_show with
// arguments {"n": i} at the start of each turn i, from 1, then answers.
func startAppsBot(t *testing.T) *appsBot {
	t.Helper()
	f := testenv.FeaturesEntry(t, false, "app_show", "app_refresh", "model_only")
	f["args"] = []string{"-meta-tools", `{"model_only": {"ui": {"visibility": ["model"]}}, "asked": {}}`}
	return startAppsBotWith(t, "f", "app_show", f, nil)
}

// startAppsBotWith starts an appsBot with the one server entry and the
// settings env adds, whose model calls tool with arguments {"n": i} at
// the start of each turn i, from 1, then answers.
//
// env's values may name the proxy's port as {port}: the proxy, at
// 127.0.0.1, takes any host name a test's browser resolves to it (such as
// PUBLIC_URL=https://bot.test:{port}), and passes the Host header on.
func startAppsBotWith(t *testing.T, server, tool string, entry map[string]any, env map[string]string) *appsBot {
	t.Helper()
	var turn atomic.Int64
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "[use_mcp_tool for '"+tool+"'") {
			return llmfake.Text(`<attempt_completion><result>shown</result></attempt_completion>`)
		}
		return llmfake.Text(fmt.Sprintf(`<use_mcp_tool><server_name>%s</server_name><tool_name>%s</tool_name><arguments>{"n": %d}</arguments></use_mcp_tool>`, server, tool, turn.Add(1)))
	})
	b := &appsBot{tg: tgfake.New(t), model: model}
	e := runEnv(t, b.tg, model.URL())
	e["ALLOWED_USER_IDS"] = "42,43"
	addr := freeAddr(t)
	backend, _ := url.Parse("http://" + addr)
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(proxy.Close)
	b.publicURL, b.browser = proxy.URL, proxy.Client()
	e["HTTP_LISTEN"] = addr
	e["PUBLIC_URL"] = proxy.URL
	b.listen = addr
	_, b.port, _ = net.SplitHostPort(proxy.Listener.Addr().String())
	for k, v := range env {
		e[k] = strings.ReplaceAll(v, "{port}", b.port)
	}
	b.env, b.settings = e, settings(t, map[string]any{server: entry})
	b.start(t)
	return b
}

// appButton waits for the web_app button in chat's messages after skip,
// and returns its message and URL.
func appButton(t *testing.T, tg *tgfake.Server, chat int64, skip int) (tgfake.Message, string) {
	t.Helper()
	var found tgfake.Message
	tg.WaitFor(t, 30*time.Second, "an app's button", func() bool {
		for _, m := range tg.Messages(chat) {
			if m.ID > skip && len(m.WebApps) > 0 {
				found = m
				return true
			}
		}
		return false
	})
	return found, found.WebApps[0].URL
}

// openApp starts an appsBot whose model shows f's app in alice's private
// chat, and returns the bot, the app's button, its page's URL and init
// data signed for alice now.
func openApp(t *testing.T) (b *appsBot, button tgfake.Message, pageURL, initData string) {
	t.Helper()
	b = startAppsBot(t)
	b.tg.Text(42, 42, "show me the app")
	button, pageURL = appButton(t, b.tg, 42, 0)
	return b, button, pageURL, tgfake.WebAppData(tgfake.Token, alice, time.Now())
}

// appText is MCP content of one text.
func appText(s string) []map[string]any { return []map[string]any{{"type": "text", "text": s}} }

// A call of a tool that has an app gets a web_app button opening
// PUBLIC_URL/apps/<token>, named after the tool, whose token names the
// caller and works for a day; made in a group, the button goes to the
// member's private chat (Telegram takes web_app buttons nowhere else).
func TestAppButton(t *testing.T) {
	b := startAppsBot(t)
	signer := apps.NewSigner(tgfake.Token)
	b.tg.Text(42, 42, "show me the app")
	m, u := appButton(t, b.tg, 42, 0)
	if !strings.Contains(m.Plain, "app_show") || !strings.HasPrefix(m.WebApps[0].Text, "🧩 Open app_show") {
		t.Errorf("the button's message says %q, its button %q: want them to name app_show", m.Plain, m.WebApps[0].Text)
	}
	token, ok := strings.CutPrefix(u, b.publicURL+"/apps/")
	if !ok {
		t.Fatalf("button opens %s, want %s/apps/<token>", u, b.publicURL)
	}
	if strings.Contains(u, tgfake.Token) || strings.Contains(u, strings.Split(tgfake.Token, ":")[1]) {
		t.Errorf("the button's URL %s holds the bot's token", u)
	}
	if _, user, err := signer.Verify(token, time.Now().Add(apps.ViewTTL-time.Minute)); err != nil || user != 42 {
		t.Errorf("the token names user %d (%v), want 42 until a day from now", user, err)
	}
	if _, _, err := signer.Verify(token, time.Now().Add(apps.ViewTTL+time.Minute)); err == nil {
		t.Error("the token still works after a day")
	}

	last := b.tg.Messages(42)[len(b.tg.Messages(42))-1].ID
	b.tg.Text(-100, 43, "@mcpgram_bot show me the app")
	_, u = appButton(t, b.tg, 43, 0)
	token, _ = strings.CutPrefix(u, b.publicURL+"/apps/")
	if _, user, err := signer.Verify(token, time.Now()); err != nil || user != 43 {
		t.Errorf("the group call's token names user %d (%v), want 43", user, err)
	}
	for _, m := range b.tg.Messages(-100) {
		if len(m.WebApps) > 0 {
			t.Errorf("a web_app button in the group: %+v", m)
		}
	}
	for _, m := range b.tg.Messages(42) {
		if m.ID > last && len(m.WebApps) > 0 {
			t.Errorf("user 42 got the button of 43's call: %+v", m)
		}
	}
}

// Without an https PUBLIC_URL no app can be shown: the call's result
// comes as ever, and no button.
func TestNoAppButtonWithoutPublicURL(t *testing.T) {
	tg := tgfake.New(t)
	model := llmfake.New(t, llmfake.Script(
		llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>app_show</tool_name><arguments>{}</arguments></use_mcp_tool>`),
		llmfake.Text(`<attempt_completion><result>shown</result></attempt_completion>`),
	))
	_, stop := startRun(t, runEnv(t, tg, model.URL()), settings(t, map[string]any{"f": testenv.FeaturesEntry(t, false, "app_show")}))
	defer stop()
	tg.Text(42, 42, "show me the app")
	tg.WaitFor(t, 30*time.Second, "the answer", func() bool {
		for _, m := range tg.Messages(42) {
			if m.Plain == "shown" {
				return true
			}
		}
		return false
	})
	for _, m := range tg.Messages(42) {
		if len(m.WebApps) > 0 {
			t.Errorf("a web_app button without PUBLIC_URL: %+v", m)
		}
	}
}
