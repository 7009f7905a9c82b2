package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// wantFrameCSP is the policy MCP Apps requires of a page that declares
// none, and a sandbox of scripts only.
const wantFrameCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; sandbox allow-scripts"

// alice and bob are users 42 and 43 as Telegram names them in init data.
var (
	alice = tgbotapi.User{ID: 42, FirstName: "Alice", LanguageCode: "de"}
	bob   = tgbotapi.User{ID: 43, FirstName: "Bob"}
)

// fetch makes one request of the browser, and returns its status, its
// Content-Security-Policy and its body.
func fetch(t *testing.T, c *http.Client, method, u string, body any) (int, string, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, u, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Security-Policy"), string(b)
}

// bridge posts one request of the host page to the bridge with initData,
// and returns the status and the JSON-RPC answer's result or error.
func bridge(t *testing.T, b *appsBot, pageURL, initData, method string, params any) (int, map[string]any) {
	t.Helper()
	code, _, body := fetch(t, b.browser, http.MethodPost, pageURL+"/rpc", map[string]any{"initData": initData, "id": 1, "method": method, "params": params})
	var out map[string]any
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("%s answered %q: %v", method, body, err)
		}
	}
	return code, out
}

// A bridgeAnswer is the status and JSON-RPC answer of one request of the
// host page to the bridge.
type bridgeAnswer struct {
	code int
	out  map[string]any
}

// bridgeAsync posts one request of the host page to the bridge, as
// bridge does, and answers on the channel it returns: for a request that
// waits for something the test does meanwhile.
func bridgeAsync(c *http.Client, pageURL, initData, method string, params any) chan bridgeAnswer {
	done := make(chan bridgeAnswer, 1)
	body, _ := json.Marshal(map[string]any{"initData": initData, "id": 1, "method": method, "params": params})
	go func() { // no t.Fatal off the test's goroutine
		var a bridgeAnswer
		resp, err := c.Post(pageURL+"/rpc", "application/json", bytes.NewReader(body))
		if err == nil {
			a.code = resp.StatusCode
			_ = json.NewDecoder(resp.Body).Decode(&a.out)
			resp.Body.Close()
		}
		done <- a
	}()
	return done
}

// The pages of an app answer only the user whose call it was, proved by
// init data Telegram signed for this bot within a day, and a URL token
// this bot signed that has not expired: forged, old or another user's
// init data, and a bad token, get 403 and a plain sentence. The app's own
// page comes under the CSP MCP Apps requires, to a ticket the bridge
// handed out; the bridge gives the app its call's input and result, runs
// its own server's app tools that need no approval (TestAppApproval has
// those that need one), refuses the rest, and every request is counted.
func TestAppHost(t *testing.T) {
	b := startAppsBot(t)
	b.tg.Text(42, 42, "show me the app")
	_, pageURL := appButton(t, b.tg, 42, 0)
	now := time.Now()
	good := tgfake.WebAppData(tgfake.Token, alice, now)

	code, csp, body := fetch(t, b.browser, http.MethodGet, pageURL, nil)
	if code != http.StatusOK || !strings.Contains(body, `src="host.js"`) || !strings.Contains(csp, "frame-src 'self'") {
		t.Fatalf("the host page: %d, CSP %q:\n%s", code, csp, body)
	}
	badToken := pageURL[:len(pageURL)-3] + "AAA"
	if code, _, body := fetch(t, b.browser, http.MethodGet, badToken, nil); code != http.StatusForbidden || !strings.Contains(body, "no longer available") {
		t.Errorf("a forged token's page: %d %q, want 403 and a plain sentence", code, body)
	}
	for name, data := range map[string]string{
		"forged":         tgfake.WebAppData("654321:OTHER", alice, now),
		"expired":        tgfake.WebAppData(tgfake.Token, alice, now.Add(-apps.MaxInitDataAge-time.Minute)),
		"another user's": tgfake.WebAppData(tgfake.Token, bob, now),
		"no":             "",
	} {
		if code, _ := bridge(t, b, pageURL, data, "mcpgram/open", nil); code != http.StatusForbidden {
			t.Errorf("%s init data: %d, want 403", name, code)
		}
	}
	if code, _ := bridge(t, b, badToken, good, "mcpgram/open", nil); code != http.StatusForbidden {
		t.Errorf("good init data, forged token: %d, want 403", code)
	}

	code, open := bridge(t, b, pageURL, good, "mcpgram/open", nil)
	res, _ := open["result"].(map[string]any)
	if code != http.StatusOK || res == nil {
		t.Fatalf("mcpgram/open: %d %v", code, open)
	}
	if in, _ := json.Marshal(res["input"]); string(in) != `{"n":1}` || !strings.Contains(toJSON(res["result"]), "app shown") || res["locale"] != "de" {
		t.Errorf("mcpgram/open gave input %s, result %s, locale %v: want the call's, and Alice's language", in, toJSON(res["result"]), res["locale"])
	}
	frame := b.publicURL + res["frame"].(string)
	code, csp, body = fetch(t, b.browser, http.MethodGet, frame, nil)
	if code != http.StatusOK || csp != wantFrameCSP || !strings.Contains(body, "features app") {
		t.Errorf("the frame: %d, CSP %q (want %q):\n%.200s", code, csp, wantFrameCSP, body)
	}
	if code, _, _ := fetch(t, b.browser, http.MethodGet, strings.Split(frame, "?")[0], nil); code != http.StatusForbidden {
		t.Errorf("the frame without its ticket: %d, want 403", code)
	}

	calls := []struct {
		tool, want string
	}{
		{"app_refresh", `"refreshed 1 times"`},
		{"app_show", `"app shown; refreshed 1 times"`},
		{"model_only", "not one of its server's tools for apps"},
		{"nonexistent", "not one of its server's tools for apps"},
	}
	for _, c := range calls {
		code, out := bridge(t, b, pageURL, good, "tools/call", map[string]any{"name": c.tool, "arguments": map[string]any{}})
		if got := toJSON(out); code != http.StatusOK || !strings.Contains(got, c.want) {
			t.Errorf("tools/call %s: %d %s, want %s", c.tool, code, got, c.want)
		}
	}
	fams := scrape(t, "http://"+b.listen)
	if n, _ := value(fams, "mcpgram_app_requests_total", map[string]string{"method": "tools/call", "status": "ok"}); n != 2 {
		t.Errorf("app_requests_total{tools/call, ok} = %v, want 2", n)
	}
	if n, _ := value(fams, "mcpgram_app_requests_total", map[string]string{"method": "mcpgram/open", "status": "refused"}); n != 5 {
		t.Errorf("app_requests_total{mcpgram/open, refused} = %v, want 5", n)
	}
	limited := 0
	for range 40 {
		if code, _ := bridge(t, b, pageURL, good, "mcpgram/open", nil); code == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited == 0 {
		t.Error("40 requests at once, none limited")
	}
	if strings.Contains(b.logs.String(), good) || strings.Contains(b.logs.String(), "hash=") {
		t.Error("the log shows init data")
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
