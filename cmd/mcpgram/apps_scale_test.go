package main_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// An app shown by one instance is served by another from the database
// alone: two instances share PostgreSQL, the one that ran the call that
// showed the app stops, and the other serves the button's page, its
// bridge and its frame, runs the app's call of a tool that needs approval
// once the user approves it in the chat (the press reaching whichever
// instance Telegram's webhook does), and takes the app's message into a
// turn.
func TestAppAcrossInstances(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "[use_mcp_tool for 'app_show'") {
			return llmfake.Text(`<attempt_completion><result>shown</result></attempt_completion>`)
		}
		return llmfake.Text(`<use_mcp_tool><server_name>f</server_name><tool_name>app_show</tool_name><arguments>{"n": 1}</arguments></use_mcp_tool>`)
	})
	var target atomic.Pointer[url.URL]
	front := httptest.NewTLSServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target.Load()) }})
	t.Cleanup(front.Close)
	apps := map[string]any{"f": testenv.FeaturesEntry(t, false, "app_show")} // app_refresh needs approval
	cl := startClusterWith(t, testenv.Postgres(t), 2, model, nil, apps, "PUBLIC_URL="+front.URL)

	cl.tg.Text(42, 42, "show me the app")
	button, pageURL := appButton(t, cl.tg, 42, 0)
	cl.tg.WaitText(t, 42, "shown")
	shown := slices.IndexFunc(cl.logs, func(l *testenv.Buffer) bool { return strings.Contains(l.String(), "model call") })
	if shown < 0 {
		t.Fatal("no instance logged the model call")
	}
	cl.stop(t, shown)
	other := 1 - shown
	target.Store(&url.URL{Scheme: "http", Host: cl.addrs[other]})

	browser := &appsBot{browser: front.Client()}
	initData := tgfake.WebAppData(tgfake.Token, alice, time.Now())
	if code, _, body := fetch(t, browser.browser, http.MethodGet, pageURL, nil); code != http.StatusOK || !strings.Contains(body, "host.js") {
		t.Fatalf("the host page from instance %d: %d %.200q", other, code, body)
	}
	code, open := bridge(t, browser, pageURL, initData, "mcpgram/open", nil)
	res, _ := open["result"].(map[string]any)
	frame, _ := res["frame"].(string)
	if code != http.StatusOK || frame == "" {
		t.Fatalf("mcpgram/open from instance %d: %d %v", other, code, open)
	}
	if code, _, body := fetch(t, browser.browser, http.MethodGet, front.URL+frame, nil); code != http.StatusOK || !strings.Contains(body, "features app") {
		t.Fatalf("the frame from instance %d: %d %.200q", other, code, body)
	}

	called := bridgeAsync(browser.browser, pageURL, initData, "tools/call", map[string]any{"name": "app_refresh", "arguments": map[string]any{}})
	card, approve, _ := appCard(t, cl.tg, 42, button.ID)
	cl.tg.Press(42, 42, card.ID, approve)
	if got := <-called; got.code != http.StatusOK || !strings.Contains(toJSON(got.out["result"]), "refreshed 1 times") {
		t.Errorf("the approved call gave %d %v, want app_refresh's result", got.code, got.out)
	}

	if code, out := bridge(t, browser, pageURL, initData, "ui/message", map[string]any{"role": "user", "content": appText("hello from the app")}); code != http.StatusOK || out["error"] != nil {
		t.Fatalf("ui/message: %d %v", code, out)
	}
	cl.tg.WaitFor(t, 30*time.Second, "the app's message and its turn's answer", func() bool {
		said := false
		for _, m := range cl.tg.Messages(42) {
			said = said || strings.Contains(m.Plain, "hello from the app")
			if said && m.ID > card.ID && m.Plain == "shown" {
				return true
			}
		}
		return false
	})
	if !strings.Contains(cl.logs[other].String(), "app request") {
		t.Errorf("instance %d, which served the app, logged no app request", other)
	}
	cl.stop(t, other)
}
