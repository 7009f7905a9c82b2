package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// originPage is what the features app's page declares of itself under
// APPS_ORIGIN: one origin of its own, and three of the bot's, which its
// policy must leave out, and a border.
var originPage = map[string]any{
	"csp":           map[string]any{"connectDomains": []any{"https://bot.test", "https://api.example.com", "https://*.apps.test"}, "resourceDomains": []any{"https://cdn.example.com"}},
	"permissions":   map[string]any{"clipboardWrite": map[string]any{}, "camera": map[string]any{}},
	"prefersBorder": true,
}

// startOriginBot starts an appsBot at PUBLIC_URL https://bot.test, whose
// apps are served at APPS_ORIGIN https://*.apps.test (both at the
// proxy's port), showing the features app, whose page declares
// originPage, with clipboardWrite and microphone granted.
func startOriginBot(t *testing.T) *appsBot {
	t.Helper()
	declared, _ := json.Marshal(originPage)
	entry := testenv.FeaturesEntry(t, false, "app_show")
	entry["args"] = []string{"-app-page-ui", string(declared)}
	return startAppsBotWith(t, "f", "app_show", entry, map[string]string{
		"PUBLIC_URL": "https://bot.test:{port}", "APPS_ORIGIN": "https://*.apps.test:{port}", "APPS_PERMISSIONS": "clipboardWrite,microphone",
	})
}

// wantOriginCSP is the policy of originPage's frame: the default, its own
// two origins, and a sandbox that keeps the server's origin.
const wantOriginCSP = "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; style-src 'self' 'unsafe-inline' https://cdn.example.com; img-src 'self' data: https://cdn.example.com; font-src https://cdn.example.com; media-src 'self' data: https://cdn.example.com; connect-src https://api.example.com; sandbox allow-scripts allow-same-origin"

// getAt gets path of the bot's proxy as the host name host asks for it.
func getAt(t *testing.T, b *appsBot, host, path string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, b.publicURL+path, nil)
	req.Host = host + ":" + b.port
	resp, err := b.browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	_, _ = io.Copy(&body, resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Security-Policy"), body.String()
}

// With a wildcard APPS_ORIGIN, each server's app pages are served at a
// subdomain of its own, and only there: not at the bot's PUBLIC_URL, not
// at another server's subdomain, and that host serves nothing else, not
// /metrics, not the host page. The host page frames that origin, posts
// to it alone, and keeps it as the frame's origin; the page's policy
// leaves out the origins it declares of the bot's own hosts, and
// ui/initialize tells it the origins and permissions it got.
func TestAppsOrigin(t *testing.T) {
	b := startOriginBot(t)
	b.tg.Text(42, 42, "show me the app")
	_, button := appButton(t, b.tg, 42, 0)
	if !strings.HasPrefix(button, "https://bot.test:"+b.port+"/apps/") {
		t.Fatalf("the button opens %s, want a page under PUBLIC_URL", button)
	}
	page := strings.TrimPrefix(button, "https://bot.test:"+b.port)
	code, csp, _ := getAt(t, b, "bot.test", page)
	if want := "; frame-src https://*.apps.test:" + b.port + ";"; code != http.StatusOK || !strings.Contains(csp, want) {
		t.Errorf("the host page: %d, CSP %q, want %q in it", code, csp, want)
	}

	_, open := bridge(t, b, b.publicURL+page, tgfake.WebAppData(tgfake.Token, alice, time.Now()), "mcpgram/open", nil)
	res, _ := open["result"].(map[string]any)
	origin := "https://" + (mcpgram.AppsOrigin{}).Label("f") + ".apps.test:" + b.port
	frame, _ := res["frame"].(string)
	if !strings.HasPrefix(frame, origin+"/apps/") || res["origin"] != origin || res["sandbox"] != "allow-scripts allow-same-origin" || res["border"] != true {
		t.Fatalf("mcpgram/open gave frame %q, origin %v, sandbox %v, border %v; want f's origin %s, kept, and a border", frame, res["origin"], res["sandbox"], res["border"], origin)
	}
	wantSandbox := `{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}}}`
	if got := toJSON(res["hostSandbox"]); got != wantSandbox {
		t.Errorf("ui/initialize is to say the sandbox %s, want %s", got, wantSandbox)
	}

	u, _ := url.Parse(frame)
	framePath := u.RequestURI()
	label := u.Hostname() // f's subdomain
	if code, csp, body := getAt(t, b, label, framePath); code != http.StatusOK || csp != wantOriginCSP || !strings.Contains(body, "features app") {
		t.Errorf("the page at f's origin: %d, CSP\n%q\nwant\n%q", code, csp, wantOriginCSP)
	}
	for name, at := range map[string]struct {
		host, path string
		code       int
	}{
		"the page at PUBLIC_URL":              {"bot.test", framePath, http.StatusNotFound},
		"the page at another server's origin": {(mcpgram.AppsOrigin{}).Label("g") + ".apps.test", framePath, http.StatusForbidden},
		"the page at APPS_ORIGIN's parent":    {"apps.test", framePath, http.StatusNotFound},
		"/metrics at f's origin":              {label, "/metrics", http.StatusNotFound},
		"the host page at f's origin":         {label, page, http.StatusNotFound},
		"the bridge's script at f's origin":   {label, "/apps/host.js", http.StatusNotFound},
	} {
		if code, _, _ := getAt(t, b, at.host, at.path); code != at.code {
			t.Errorf("%s: %d, want %d", name, code, at.code)
		}
	}
	if logs := b.logs.String(); !strings.Contains(logs, "declared origins of the bot's own") || !strings.Contains(logs, "https://bot.test") {
		t.Errorf("the log does not say which declared origins of the bot's own the policy left out:\n%s", logs)
	}
}

// With APPS_ORIGIN one origin, every server's app pages are served there
// and only there, each still in an opaque origin, as the apps share it:
// the host page posts to no origin by name, and the page's sandbox keeps
// allow-same-origin out.
func TestAppsOriginShared(t *testing.T) {
	entry := testenv.FeaturesEntry(t, false, "app_show")
	b := startAppsBotWith(t, "f", "app_show", entry, map[string]string{"PUBLIC_URL": "https://bot.test:{port}", "APPS_ORIGIN": "https://apps.test:{port}"})
	b.tg.Text(42, 42, "show me the app")
	_, button := appButton(t, b.tg, 42, 0)
	page := strings.TrimPrefix(button, "https://bot.test:"+b.port)
	_, open := bridge(t, b, b.publicURL+page, tgfake.WebAppData(tgfake.Token, alice, time.Now()), "mcpgram/open", nil)
	res, _ := open["result"].(map[string]any)
	frame, _ := res["frame"].(string)
	if !strings.HasPrefix(frame, "https://apps.test:"+b.port+"/apps/") || res["origin"] != "" || res["sandbox"] != "allow-scripts" {
		t.Fatalf("mcpgram/open gave frame %q, origin %v, sandbox %v; want APPS_ORIGIN's, none, allow-scripts", frame, res["origin"], res["sandbox"])
	}
	u, _ := url.Parse(frame)
	if code, csp, _ := getAt(t, b, "apps.test", u.RequestURI()); code != http.StatusOK || csp != wantFrameCSP {
		t.Errorf("the page at APPS_ORIGIN: %d, CSP %q, want %q", code, csp, wantFrameCSP)
	}
	if code, _, _ := getAt(t, b, "bot.test", u.RequestURI()); code != http.StatusNotFound {
		t.Errorf("the page at PUBLIC_URL: %d, want 404", code)
	}
}
