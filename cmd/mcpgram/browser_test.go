package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png" // screenshots
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// chromium returns Debian's headless browser, or skips the test loudly
// (fails it where MCPGRAM_REQUIRE_CHROMIUM is set, as in CI).
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("MCPGRAM_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium is not installed, and MCPGRAM_REQUIRE_CHROMIUM says it must be: install Debian's chromium")
	}
	if err != nil {
		t.Skip("SKIPPED LOUDLY: chromium is not installed, so MCP Apps are not tested in a browser; install Debian's chromium (.ci/run does)")
	}
	return path
}

// A browser is one headless Chromium with one tab, which keeps the
// default JavaScript context of each frame it loads, and the headers of
// each response.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	contexts map[string]runtime.ExecutionContextID // by frame id
	csp      map[string]string                     // by URL
}

// startBrowser starts Chromium in the background, so that a test can start
// its bot meanwhile: the function it returns waits until it is up. It
// ends with the test. Sandboxed frames stay in the page's process (no
// site isolation), so that the test can reach into them; the proxy's
// certificate is the test's own, and every host name under .test is it.
func startBrowser(t *testing.T, exe string) func(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("ignore-certificate-errors", true), chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-features", "IsolateSandboxedIframes,site-per-process"), chromedp.WindowSize(480, 720),
		chromedp.Flag("host-resolver-rules", "MAP *.test 127.0.0.1"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{contexts: map[string]runtime.ExecutionContextID{}, csp: map[string]string{}}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	b.ctx = ctx
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	t.Cleanup(func() { cancel(); <-started; cancelAlloc() })
	return func(t *testing.T) *browser {
		t.Helper()
		err := <-started
		started <- err // for the cleanup
		if err != nil {
			t.Fatalf("start chromium: %v", err)
		}
		return b
	}
}

// listen keeps each frame's default JavaScript context, and each
// response's Content-Security-Policy.
func (b *browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventExecutionContextCreated:
		var aux struct {
			FrameID   string `json:"frameId"`
			IsDefault bool   `json:"isDefault"`
		}
		if json.Unmarshal(e.Context.AuxData, &aux) == nil && aux.IsDefault {
			b.contexts[aux.FrameID] = e.Context.ID
		}
	case *network.EventResponseReceived:
		for k, v := range e.Response.Headers {
			if strings.EqualFold(k, "Content-Security-Policy") {
				b.csp[e.Response.URL] = fmt.Sprint(v)
			}
		}
	}
}

// do runs actions in the tab, within 30 s.
func (b *browser) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// openSigned opens pageURL as Telegram would, with alice's init data
// signed now in its fragment, and the fragment's more (&name=value...).
func (b *browser) openSigned(t *testing.T, pageURL, more string) {
	t.Helper()
	initData := tgfake.WebAppData(tgfake.Token, alice, time.Now())
	b.do(t, chromedp.Navigate(pageURL+"#tgWebAppData="+url.QueryEscape(initData)+"&tgWebAppVersion=8.0"+more))
}

// frameCSP is the Content-Security-Policy the app's frame came with; the
// test fails unless the browser loaded the frame once.
func (b *browser) frameCSP(t *testing.T) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var framed []string
	for u, csp := range b.csp {
		if strings.Contains(u, "/frame?") {
			framed = append(framed, csp)
		}
	}
	if len(framed) != 1 {
		t.Fatalf("the browser loaded the frame %d times, want once: %v", len(framed), b.csp)
	}
	return framed[0]
}

// appFrame returns the id of the page's one child frame, the app's, once
// its page has a JavaScript context.
func (b *browser) appFrame(t *testing.T) string {
	t.Helper()
	var id string
	testenv.Eventually(t, 30*time.Second, "the app's frame", func() bool {
		b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
			res, err := cdp.Call(ctx, target, page.GetFrameTree, cdp.Empty{})
			if err == nil && len(res.FrameTree.ChildFrames) == 1 && strings.Contains(res.FrameTree.ChildFrames[0].Frame.URL, "/frame") {
				id = string(res.FrameTree.ChildFrames[0].Frame.ID)
			}
			return err
		}))
		b.mu.Lock()
		defer b.mu.Unlock()
		return id != "" && b.contexts[id] != 0
	})
	return id
}

// mainFrame returns the id of the page's own frame, the host page's.
func (b *browser) mainFrame(t *testing.T) string {
	t.Helper()
	var id string
	b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		res, err := cdp.Call(ctx, target, page.GetFrameTree, cdp.Empty{})
		if err == nil {
			id = string(res.FrameTree.Frame.ID)
		}
		return err
	}))
	return id
}

// eval evaluates expr in the default context of frame, awaiting a
// promise, and returns its value as a string.
func (b *browser) eval(t *testing.T, frame, expr string) string {
	t.Helper()
	b.mu.Lock()
	id := b.contexts[frame]
	b.mu.Unlock()
	var out string
	yes := true
	b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		res, err := cdp.Call(ctx, target, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: id, AwaitPromise: &yes, ReturnByValue: &yes})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("%s: %s", expr, res.ExceptionDetails.Text)
		}
		return json.Unmarshal(res.Result.Value, &out)
	}))
	return out
}

// npmAppBot starts an appsBot running the example server pkg of
// @modelcontextprotocol from npm, whose tool (titled title) alice asks
// for with text; it returns the bot and the URL of the app's button,
// which must name the tool's title. With ask, the tool is not
// auto-approved: alice approves the model's call on its card.
func npmAppBot(t *testing.T, pkg, tool, title, text string, ask bool) (*appsBot, string) {
	t.Helper()
	node, dir := testenv.NPMPackage(t, "@modelcontextprotocol/"+pkg)
	entry := map[string]any{"command": node, "args": []string{filepath.Join(dir, "dist", "index.js"), "--stdio"}, "autoApprove": []string{tool}}
	if ask {
		delete(entry, "autoApprove")
	}
	bot := startAppsBotWith(t, pkg, tool, entry, nil)
	bot.tg.Text(42, 42, text)
	if ask {
		card, approve := approvalCard(t, bot.tg, tool, 0)
		bot.tg.Press(42, 42, card.ID, approve)
	}
	m, pageURL := appButton(t, bot.tg, 42, 0)
	if !strings.Contains(m.WebApps[0].Text, title) {
		t.Errorf("the button says %q, want the tool's title, %s", m.WebApps[0].Text, title)
	}
	return bot, pageURL
}

// approvalCard waits for the first card after skip in alice's chat that
// names tool, and returns it and the data of its ✅ Approve.
func approvalCard(t *testing.T, tg *tgfake.Server, tool string, skip int) (tgfake.Message, string) {
	t.Helper()
	var card tgfake.Message
	var data string
	tg.WaitFor(t, 30*time.Second, "an approval card for "+tool, func() bool {
		for _, m := range tg.Messages(42) {
			for _, b := range m.Buttons() {
				if m.ID > skip && strings.Contains(m.Plain, tool) && strings.HasPrefix(b, "✅ Approve=") {
					card, data = m, strings.TrimPrefix(b, "✅ Approve=")
					return true
				}
			}
		}
		return false
	})
	return card, data
}

// The Mini App opens in a real browser as Telegram would open it, the
// button's URL with init data the test signs in its fragment, against
// @modelcontextprotocol/server-basic-vanillajs, whose get-time needs
// approval: the app shows the call's result (the server's time); its
// button gets a new one through the bridge, once alice approves the app's
// call on the card it brings into the chat, and not before; its Send
// Message says alice's words in the chat and starts a turn; and from
// inside its frame the host page's DOM, the host's
// cookies and mcpgram's endpoints are out of reach, under the CSP MCP
// Apps requires; once the frame leaves the app's page, the bridge is
// closed. MCPGRAM_APP_SCREENSHOT names a file to save the
// screenshot to (make docs-screenshot).
func TestAppInBrowser(t *testing.T) {
	browserUp := startBrowser(t, chromium(t))
	bot, pageURL := npmAppBot(t, "server-basic-vanillajs", "get-time", "Get Time", "what time is it on the server?", true)
	initData := tgfake.WebAppData(tgfake.Token, alice, time.Now())
	// Telegram's theme, one colour of it not one (the fragment is
	// anyone's to write).
	themeParams := `{"bg_color":"#123456","text_color":"#fedcba","hint_color":"url(https://example.com/x)"}`
	b := browserUp(t)
	b.do(t, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		secure := true
		_, err := cdp.Call(ctx, target, network.SetCookie, network.SetCookieParams{Name: "host_secret", Value: "s3cret", URL: bot.publicURL, Secure: &secure})
		return err
	}), chromedp.Navigate(pageURL+"#tgWebAppData="+url.QueryEscape(initData)+"&tgWebAppVersion=8.0&tgWebAppPlatform=android&tgWebAppThemeParams="+url.QueryEscape(themeParams)))
	frame := b.appFrame(t)

	timeText := `document.getElementById("server-time") ? document.getElementById("server-time").textContent : ""`
	var first string
	testenv.Eventually(t, 30*time.Second, "the app to show the call's result", func() bool {
		first = b.eval(t, frame, timeText)
		return strings.Contains(first, "T") && strings.HasSuffix(first, "Z")
	})
	button := bot.tg.Messages(42)[len(bot.tg.Messages(42))-1]
	b.eval(t, frame, `document.getElementById("get-time-btn").click(), ""`)
	card, approve := approvalCard(t, bot.tg, "get-time", button.ID)
	if shown := b.eval(t, frame, timeText); !strings.Contains(card.Plain, "The app") || shown != first {
		t.Errorf("before the press, the card says %q and the app shows %q; want the app's card, and the first time", card.Plain, shown)
	}
	bot.tg.Press(42, 42, card.ID, approve)
	testenv.Eventually(t, 30*time.Second, "a new time through the bridge", func() bool {
		now := b.eval(t, frame, timeText)
		return now != first && strings.HasSuffix(now, "Z")
	})

	calls := len(bot.model.Calls())
	b.eval(t, frame, `(document.getElementById("message-text").value = "hello from vanillajs", document.getElementById("send-message-btn").click(), "")`)
	bot.tg.WaitFor(t, 30*time.Second, "the app's message in the chat", func() bool {
		for _, m := range bot.tg.Messages(42) {
			if m.ID > card.ID && strings.Contains(m.Plain, "From the app") && strings.Contains(m.Plain, "hello from vanillajs") {
				return true
			}
		}
		return false
	})
	testenv.Eventually(t, 30*time.Second, "the model to read the app's message", func() bool {
		for _, c := range bot.model.Calls()[calls:] {
			if strings.Contains(c.Request.Last(), "hello from vanillajs") {
				return true
			}
		}
		return false
	})

	for name, want := range map[string]string{"--color-background-primary": "#123456", "--color-text-primary": "#fedcba", "--color-text-secondary": ""} {
		if got := b.eval(t, frame, `document.documentElement.style.getPropertyValue("`+name+`")`); got != want {
			t.Errorf("the app's %s is %q, want %q from Telegram's theme", name, got, want)
		}
	}

	probes := map[string]struct{ expr, want string }{
		"the host page's DOM": {`(() => { try { return "reached: " + parent.document.title } catch (e) { return "blocked: " + e.name } })()`, "blocked: SecurityError"},
		"the host's cookies":  {`(() => { try { return "read: " + document.cookie } catch (e) { return "blocked: " + e.name } })()`, "blocked: SecurityError"},
		"mcpgram's bridge":    {`fetch("` + bot.publicURL + `/apps/x/rpc", {method: "POST", body: "{}"}).then(r => "reached: " + r.status, e => "blocked: " + e.name)`, "blocked: TypeError"},
		"a page of the bot":   {`fetch("/metrics").then(r => "reached: " + r.status, e => "blocked: " + e.name)`, "blocked: TypeError"},
	}
	for name, p := range probes {
		if got := b.eval(t, frame, p.expr); got != p.want {
			t.Errorf("from the app's frame, %s: %q, want %q", name, got, p.want)
		}
	}
	if csp := b.frameCSP(t); csp != wantFrameCSP {
		t.Errorf("the frame came with CSP %q, want %q", csp, wantFrameCSP)
	}
	screenshot(t, b)

	// The frame sent elsewhere (here by script; a link followed does the
	// same) holds a page that is not the app's: the bridge closes, and
	// the host page says so.
	b.eval(t, frame, `(location.href = "`+bot.publicURL+`/apps/host.js", "")`)
	left := `document.getElementById("app").hidden + " " + document.getElementById("status").textContent`
	testenv.Eventually(t, 30*time.Second, "the host page to close the bridge", func() bool {
		return b.eval(t, b.mainFrame(t), left) == "true The app left its page. Open it again from its button in the chat."
	})
}

// screenshot takes a screenshot of the page, fails if it is blank (every
// pixel nearly the same), and saves it where MCPGRAM_APP_SCREENSHOT says.
func screenshot(t *testing.T, b *browser) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	var n, sum, sq float64
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			v := float64(cr+cg+cb) / 3 / 257
			n, sum, sq = n+1, sum+v, sq+v*v
		}
	}
	if variance := sq/n - (sum/n)*(sum/n); variance < 50 {
		t.Errorf("the screenshot is blank: variance %.1f", variance)
	}
	if path := os.Getenv("MCPGRAM_APP_SCREENSHOT"); path != "" {
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
