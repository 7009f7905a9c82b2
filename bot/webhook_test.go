package bot_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

const webhookSecret = "s3cret_token-1"

// front is the bot's public address: it forwards to the running bot's
// webhook handler, and answers 503 while none runs, as a proxy would.
type front struct {
	*httptest.Server
	handler atomic.Pointer[http.Handler]
}

func newFront(t testing.TB) *front {
	f := &front{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := f.handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "no bot", http.StatusServiceUnavailable)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *front) serve(b *bot.Bot) {
	h := b.WebhookHandler()
	f.handler.Store(&h)
}

func webhookMode(url string) func(*bot.Options) {
	return func(c *bot.Options) {
		c.Webhook, c.WebhookSecret, c.WebhookURL = true, webhookSecret, url
	}
}

// In webhook mode the bot registers its URL with the secret, takes updates
// only from requests that carry it, and never polls.
func TestWebhook(t *testing.T) {
	fake := tgfake.New(t)
	f := newFront(t)
	h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), webhookMode(f.URL+"/telegram"))
	f.serve(h.bot)

	fake.Text(alice, alice, "hello")
	fake.Text(bob, bob, "hi")
	waitText(t, fake, alice, "echo: hello")
	waitText(t, fake, bob, "echo: hi")
	waitHandled(t, h)
	if calls := fake.Calls("getUpdates"); len(calls) != 0 {
		t.Errorf("the bot polled %d times in webhook mode", len(calls))
	}
	set := fake.Calls("setWebhook")
	if len(set) != 1 || set[0].Params["secret_token"] != webhookSecret || set[0].Params["url"] != f.URL+"/telegram" || set[0].Params["max_connections"] != "1" {
		t.Errorf("setWebhook calls: %+v", set)
	}

	// Anyone who finds the URL can post to it: without the secret nothing
	// is taken.
	forged := `{"update_id": 999999, "message": {"message_id": 1, "date": 1, "chat": {"id": 7, "type": "private"}, "from": {"id": 7}, "text": "forged"}}`
	for _, secret := range []string{"", "wrong", webhookSecret + "x"} {
		req, _ := http.NewRequest(http.MethodPost, f.URL+"/telegram", strings.NewReader(forged))
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("a request with secret %q: %d, want 403", secret, resp.StatusCode)
		}
	}
	for _, body := range []string{"not json", `{"update_id": 0}`, strings.Repeat("x", 5<<20)} {
		req, _ := http.NewRequest(http.MethodPost, f.URL+"/telegram", strings.NewReader(body))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", webhookSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a body of %d bytes that is no update: %d, want 400", len(body), resp.StatusCode)
		}
	}
	if n, _, err := h.db.InboxBacklog(t.Context()); err != nil || n != 0 {
		t.Errorf("inbox backlog after refused requests: %d, %v", n, err)
	}
	if items, err := h.db.InboxQueued(t.Context(), 0, 0); err != nil || len(items) != 0 {
		t.Errorf("queued: %v, %v", items, err)
	}
	if countText(fake, 7, "forged") != 0 || len(fake.Messages(7)) != 0 {
		t.Error("a forged update was answered")
	}
}

// Updates Telegram could not deliver while the bot was down arrive when it
// is back, and each is answered once.
func TestWebhookRestart(t *testing.T) {
	fake := tgfake.New(t)
	f := newFront(t)
	dir := t.TempDir()
	a := newFakeAgent()
	h1 := startBot(t, fake, dir, a, newFakeHub(1), webhookMode(f.URL+"/telegram"))
	f.serve(h1.bot)
	fake.Text(alice, alice, "before")
	waitText(t, fake, alice, "echo: before")
	waitHandled(t, h1)
	h1.stop()
	f.handler.Store(nil)

	fake.Text(alice, alice, "while down")
	fake.WaitFor(t, 10*time.Second, "a failed delivery", func() bool {
		return strings.Contains(fake.Webhook().LastError, "503")
	})

	h2 := startBot(t, fake, dir, a, newFakeHub(1), webhookMode(""))
	f.serve(h2.bot)
	waitText(t, fake, alice, "echo: while down")
	waitHandled(t, h2)
	for _, text := range []string{"echo: before", "echo: while down"} {
		if n := countText(fake, alice, text); n != 1 {
			t.Errorf("%q sent %d times, want once", text, n)
		}
	}
}
