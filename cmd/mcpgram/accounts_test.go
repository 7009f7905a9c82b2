package main_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

const accountsKey = "a-test-key-of-more-than-32-characters!"

// whoModel calls the per-user server's whoami once the catalog lists it
// (by its description: the echo server has a whoami too),
// and its connect tool before, then reports the result.
func whoModel(c llmfake.Call) llmfake.Reply {
	last := c.Request.Messages[len(c.Request.Messages)-1].Content
	if _, after, ok := strings.Cut(last, "] Result:"); ok {
		return llmfake.Text("<attempt_completion><result>Seen: " + strings.TrimSpace(strings.Trim(strings.TrimSpace(after), "`")) + "</result></attempt_completion>")
	}
	for _, told := range []string{"the user declined to connect their account to mine", "the user did not connect their account to mine"} {
		if strings.Contains(last, told) {
			return llmfake.Text("<attempt_completion><result>Told: " + told + "</result></attempt_completion>")
		}
	}
	tool := "connect"
	server := "mine"
	if strings.Contains(c.Request.Messages[0].Content, "## shared") || strings.Contains(c.Request.Messages[0].Content, "shared:") {
		server = "shared"
	}
	if strings.Contains(c.Request.Messages[0].Content, "whoami: who the token is of") {
		tool = "whoami"
	}
	return llmfake.Text(`<use_mcp_tool><server_name>` + server + `</server_name><tool_name>` + tool + `</tool_name><arguments>{}</arguments></use_mcp_tool>`)
}

// accountsEnv is a bot of users 42, 43 and 44 with a per-user protected
// server, "mine".
type accountsEnv struct {
	tg    *tgfake.Server
	model *llmfake.Server
	fake  *oauthfake.Server
	env   env
	path  string
}

func newAccountsEnv(t *testing.T) *accountsEnv {
	t.Helper()
	a := &accountsEnv{tg: tgfake.New(t), model: llmfake.New(t, whoModel), fake: oauthfake.Start(t)}
	a.env = runEnv(t, a.tg, a.model.URL())
	a.env["ALLOWED_USER_IDS"] = "42,43,44"
	a.env["OAUTH_KEY"] = accountsKey
	a.path = settings(t, map[string]any{
		"mine": map[string]any{"type": "streamableHttp", "url": a.fake.URL() + "/mcp", "timeout": 10, "oauth": map[string]any{"account": "user"}, "autoApprove": []string{"whoami"}},
	})
	return a
}

// connectCard waits for the connect card of chat after skip and returns
// it with its sign-in address.
func connectCard(t *testing.T, tg *tgfake.Server, chat int64, skip int) (tgfake.Message, string) {
	t.Helper()
	card := formCard(t, tg, chat, "Connect your account to mine", skip)
	for _, row := range card.Keyboard {
		for _, b := range row {
			if b.URL != nil && strings.HasPrefix(b.Text, "🔑 Connect") {
				return card, *b.URL
			}
		}
	}
	t.Fatalf("no Connect button on %q: %v", card.Plain, card.Buttons())
	return card, ""
}

// signIn is the user's browser: it signs in as account and returns the
// address it ended on.
func signIn(t *testing.T, authURL, account string) string {
	t.Helper()
	back, err := oauthfake.Authorize(t.Context(), authURL, account)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// Two users of one bot each connect their own account by pasting back
// the address their browser ended on, and each call reaches the server
// with that user's token: the card names the server and its domain; a
// paste that is not such an address, and one of another user's sign-in,
// change nothing and say so; the pasted messages are deleted and never
// reach the model, and once the sign-ins are over the database file
// holds none of their codes and states; a restart keeps both
// connections.
func TestEachUserConnectsTheirOwnAccount(t *testing.T) {
	a := newAccountsEnv(t)
	_, stop := startRun(t, a.env, a.path)

	a.tg.Text(42, 42, "who am I?")
	card42, url42 := connectCard(t, a.tg, 42, 0)
	for _, want := range []string{"mcpgram asks you to connect your own account to the server mine at:\n127.0.0.1", "copy that whole address and send it here"} {
		if !strings.Contains(card42.Plain, want) {
			t.Errorf("the card does not say %q:\n%s", want, card42.Plain)
		}
	}
	a.tg.Text(43, 43, "who am I?")
	_, url43 := connectCard(t, a.tg, 43, 0)
	back42, back43 := signIn(t, url42, "alice"), signIn(t, url43, "bob")

	a.tg.Text(42, 42, "hello")
	a.tg.WaitText(t, 42, "That is not the address your browser ended on.")
	foreign := a.tg.Text(43, 43, back42)
	a.tg.WaitText(t, 43, "That address belongs to someone else's sign-in, so nothing was changed.")
	pasted := a.tg.Text(42, 42, back42)
	a.tg.WaitText(t, 42, "Seen: Connected to mine with the user's own account. Its tools: [whoami].")
	a.tg.Text(43, 43, back43)
	a.tg.WaitText(t, 43, "Seen: Connected to mine")

	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, "who am I now?"), "Seen: alice")
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "who am I now?"), "Seen: bob")
	late := a.tg.Text(42, 42, back42)
	waitAfter(t, a.tg, 42, late, "That looks like a sign-in address, but no sign-in of yours waits for it here")

	deleted := map[string]bool{}
	for _, c := range a.tg.Calls("deleteMessage") {
		deleted[c.Params["chat_id"]+"/"+c.Params["message_id"]] = true
	}
	for _, m := range []struct {
		chat int64
		id   int
	}{{42, pasted}, {43, foreign}, {42, late}} {
		if !deleted[fmt.Sprint(m.chat, "/", m.id)] {
			t.Errorf("the pasted address %d in chat %d was not deleted (deleted: %v)", m.id, m.chat, deleted)
		}
	}
	for _, c := range a.model.Calls() {
		for _, m := range c.Request.Messages {
			if strings.Contains(m.Content, "code=") || strings.Contains(m.Content, "127.0.0.1/oauth") {
				t.Fatalf("a pasted sign-in address reached the model: %q", m.Content)
			}
		}
	}
	stop()
	noSignInLeft(t, a.env["DATABASE_PATH"], back42, back43)

	// A restart: the connections are kept, nobody is asked again.
	authorizations := a.fake.Counts().Authorizations
	_, stop = startRun(t, a.env, a.path)
	defer stop()
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, "who am I after the restart?"), "Seen: Connected to mine")
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, "and now?"), "Seen: alice")
	if n := a.fake.Counts().Authorizations; n != authorizations {
		t.Errorf("authorizations after the restart = %d, want %d (none)", n, authorizations)
	}
}

// noSignInLeft fails the test if the database file at path (or its
// write-ahead log) holds the code or the state of any of the addresses
// the sign-ins' browsers ended on.
func noSignInLeft(t *testing.T, path string, backs ...string) {
	t.Helper()
	var raw []byte
	for _, file := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		raw = append(raw, b...)
	}
	for _, back := range backs {
		u, err := url.Parse(back)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"code", "state"} {
			if v := u.Query().Get(name); v == "" || bytes.Contains(raw, []byte(v)) {
				t.Errorf("the database holds the sign-in's %s %q after it is over", name, v)
			}
		}
	}
}

// A user who presses Cancel on the card is not connected, and the model
// is told the user declined; another member's press is refused.
func TestConnectDeclined(t *testing.T) {
	a := newAccountsEnv(t)
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	a.tg.Text(44, 44, "who am I?")
	card, _ := connectCard(t, a.tg, 44, 0)
	if ans := pressAs(t, a.tg, 44, 43, card, "✖️ Cancel"); !strings.Contains(ans.Text, "only they can answer") {
		t.Errorf("another user's press answered %q", ans.Text)
	}
	pressOn(t, a.tg, 44, card, "✖️ Cancel")
	a.tg.WaitText(t, 44, "Told: the user declined to connect their account to mine")
	if n := a.fake.Counts().CodeExchanges; n != 0 {
		t.Errorf("code exchanges = %d, want 0", n)
	}
}

// With PUBLIC_URL, the browser comes back to the bot's HTTP listener,
// which finishes the sign-in and lets the waiting call run; the page says
// so. A forged or replayed state changes nothing.
func TestConnectThroughPublicURL(t *testing.T) {
	a := newAccountsEnv(t)
	// PUBLIC_URL is https: a TLS proxy in front of HTTP_LISTEN, as in
	// production.
	addr := freeAddr(t)
	backend, _ := url.Parse("http://" + addr)
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(proxy.Close)
	browser := proxy.Client()
	a.env["HTTP_LISTEN"] = addr
	a.env["PUBLIC_URL"] = proxy.URL
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	a.tg.Text(42, 42, "who am I?")
	card, authURL := connectCard(t, a.tg, 42, 0)
	if !strings.Contains(card.Plain, "this card changes once you have") {
		t.Errorf("the card of a public URL says:\n%s", card.Plain)
	}
	back := signIn(t, authURL, "alice")
	if !strings.HasPrefix(back, proxy.URL+"/oauth/callback?") {
		t.Fatalf("the browser came back to %s, want PUBLIC_URL/oauth/callback", back)
	}
	forged, _ := url.Parse(back)
	q := forged.Query()
	q.Set("state", "forged")
	forged.RawQuery = q.Encode()
	if code, body := get(t, browser, forged.String()); code != http.StatusBadRequest || !strings.Contains(body, "Nothing was changed") {
		t.Errorf("forged state: %d %q", code, body)
	}
	// The page the browser comes back to asks first, naming whose it is;
	// until the person confirms, nothing is connected.
	page, fields := confirmPage(t, browser, back)
	if !strings.Contains(page, "Telegram user with id <b>42</b>") || !strings.Contains(page, "If someone sent you this link") {
		t.Errorf("the confirmation page says:\n%s", page)
	}
	if n := len(a.fake.Tokens()); n != 0 {
		t.Fatalf("%d tokens issued before the person confirmed", n)
	}
	if resp, err := browser.Get(back); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("the confirmation page may be framed: %v", resp.Header)
		}
	}
	if code, body := confirm(t, browser, proxy.URL, fields); code != http.StatusOK || !strings.Contains(body, "Connected to mine") {
		t.Fatalf("callback: %d %q", code, body)
	}
	a.tg.WaitText(t, 42, "Seen: Connected to mine")
	if code, body := confirm(t, browser, proxy.URL, fields); code != http.StatusBadRequest || !strings.Contains(body, "already used") {
		t.Errorf("a confirmation posted again: %d %q", code, body)
	}
	if code, body := get(t, browser, back); code != http.StatusBadRequest || !strings.Contains(body, "already used") {
		t.Errorf("replayed callback: %d %q", code, body)
	}
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, "who am I now?"), "Seen: alice")
	for _, tok := range a.fake.Tokens() {
		if _, body := get(t, browser, back); strings.Contains(body, tok) {
			t.Error("a token on the callback page")
		}
	}
}

// waitAfter waits for a message of chat after message id that holds
// want.
func waitAfter(t *testing.T, tg *tgfake.Server, chat int64, id int, want string) {
	t.Helper()
	tg.WaitFor(t, 60*time.Second, want, func() bool { return seenAfter(tg, chat, id, want) })
}

// seenAfter reports whether a message of chat after message id holds
// want.
func seenAfter(tg *tgfake.Server, chat int64, id int, want string) bool {
	for _, m := range tg.Messages(chat) {
		if m.ID > id && strings.Contains(m.Plain, want) {
			return true
		}
	}
	return false
}

// confirmPage loads the page the browser came back to, which asks the
// person to confirm, and returns it and the fields its form posts.
func confirmPage(t *testing.T, browser *http.Client, back string) (string, url.Values) {
	t.Helper()
	code, page := get(t, browser, back)
	if code != http.StatusOK || !strings.Contains(page, `<form method="post" action="/oauth/callback">`) {
		t.Fatalf("the callback page: %d %q", code, page)
	}
	fields := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(page, -1) {
		fields.Add(m[1], html.UnescapeString(m[2]))
	}
	return page, fields
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// confirm presses the confirmation page's button: it posts fields to
// PUBLIC_URL's callback, and returns the status and page.
func confirm(t *testing.T, browser *http.Client, publicURL string, fields url.Values) (int, string) {
	t.Helper()
	resp, err := browser.PostForm(publicURL+"/oauth/callback", fields)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// comeBack is the browser coming back to PUBLIC_URL and the person
// confirming on the page it shows.
func comeBack(t *testing.T, browser *http.Client, publicURL, back string) (int, string) {
	t.Helper()
	_, fields := confirmPage(t, browser, back)
	return confirm(t, browser, publicURL, fields)
}

// get loads u as browser would, and returns its status and page.
func get(t *testing.T, browser *http.Client, u string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// A remote server that needs the operator's sign-in gets a Sign in
// button on /servers, for admins alone (checked when pressed): the card
// is the connect card, and once the address is pasted back the server is
// reconnected, for every chat, with the account signed in.
func TestAdminSignsInFromServers(t *testing.T) {
	a := newAccountsEnv(t)
	a.env["ADMIN_USER_IDS"] = "42"
	a.path = settings(t, map[string]any{
		"shared": map[string]any{"type": "streamableHttp", "url": a.fake.URL() + "/mcp", "timeout": 10, "autoApprove": []string{"whoami"}},
	})
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	card, authURL := adminSignInCard(t, a.tg)
	a.tg.Text(42, 42, signIn(t, authURL, "ops"))
	a.tg.WaitText(t, 42, "Signed in; shared is reconnected.")
	signedInCard(t, a.tg, card)
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "who is the shared account?"), "Seen: ops")
}

// The admin's Sign in through PUBLIC_URL: the browser comes back to
// PUBLIC_URL/oauth/callback, whose page says signed in for every chat;
// the card then shows it, without its buttons, and the chat is told the
// server is reconnected (once: by the instance that showed the card), and
// every chat's calls carry the operator's account. A replayed callback
// changes nothing.
func TestAdminSignsInThroughPublicURL(t *testing.T) {
	a := newAccountsEnv(t)
	a.env["ADMIN_USER_IDS"] = "42"
	a.path = settings(t, map[string]any{
		"shared": map[string]any{"type": "streamableHttp", "url": a.fake.URL() + "/mcp", "timeout": 10, "autoApprove": []string{"whoami"}},
	})
	addr := freeAddr(t)
	backend, _ := url.Parse("http://" + addr)
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(proxy.Close)
	a.env["HTTP_LISTEN"] = addr
	a.env["PUBLIC_URL"] = proxy.URL
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	card, authURL := adminSignInCard(t, a.tg)
	if !strings.Contains(card.Plain, "this card changes once you have") {
		t.Errorf("the card of a public URL says:\n%s", card.Plain)
	}
	back := signIn(t, authURL, "ops")
	if !strings.HasPrefix(back, proxy.URL+"/oauth/callback?") {
		t.Fatalf("the browser came back to %s, want PUBLIC_URL/oauth/callback", back)
	}
	page, fields := confirmPage(t, proxy.Client(), back)
	if !strings.Contains(page, "for <b>every chat</b> of this bot") {
		t.Errorf("the confirmation page of the operator's sign-in says:\n%s", page)
	}
	if code, body := confirm(t, proxy.Client(), proxy.URL, fields); code != http.StatusOK || !strings.Contains(body, "Signed in to shared for every chat") {
		t.Fatalf("callback: %d %q", code, body)
	}
	signedInCard(t, a.tg, card)
	a.tg.WaitText(t, 42, "Signed in; shared is reconnected.")
	if code, body := get(t, proxy.Client(), back); code != http.StatusBadRequest || !strings.Contains(body, "already used") {
		t.Errorf("replayed callback: %d %q", code, body)
	}
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "who is the shared account?"), "Seen: ops")
	said := 0
	for _, m := range a.tg.Messages(42) {
		if strings.Contains(m.Plain, "Signed in; shared is reconnected.") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the chat was told %d times that shared is reconnected, want once", said)
	}
}

// pressSignIn asks /servers in chat as admin 42 until shared has its Sign
// in button, checks that user 43 may not press it, presses it, and
// returns the /servers screen.
func pressSignIn(t *testing.T, tg *tgfake.Server, chat int64) tgfake.Message {
	t.Helper()
	var screen tgfake.Message
	for i := 0; !strings.Contains(strings.Join(screen.Buttons(), " "), "🔑 Sign in shared"); i++ {
		if i == 100 {
			t.Fatalf("no Sign in button on /servers: %q", screen.Plain)
		}
		before := len(tg.Messages(chat))
		tg.Text(chat, 42, "/servers")
		tg.WaitFor(t, 30*time.Second, "the /servers answer", func() bool { return len(tg.Messages(chat)) > before })
		msgs := tg.Messages(chat)
		screen = msgs[len(msgs)-1]
	}
	if ans := pressAs(t, tg, chat, 43, screen, "🔑 Sign in shared"); !strings.Contains(ans.Text, "Only admins") {
		t.Errorf("a non-admin's press answered %q", ans.Text)
	}
	pressAs(t, tg, chat, 42, screen, "🔑 Sign in shared")
	return screen
}

// adminSignInCard has admin 42 press shared's Sign in on /servers in
// their private chat, and returns the card with its sign-in address.
func adminSignInCard(t *testing.T, tg *tgfake.Server) (tgfake.Message, string) {
	t.Helper()
	screen := pressSignIn(t, tg, 42)
	card := formCard(t, tg, 42, "Connect your account to shared", screen.ID)
	for _, row := range card.Keyboard {
		for _, b := range row {
			if b.URL != nil {
				return card, *b.URL
			}
		}
	}
	t.Fatalf("no sign-in button on %q: %v", card.Plain, card.Buttons())
	return card, ""
}

// signedInCard waits for card to say signed in, without its buttons.
func signedInCard(t *testing.T, tg *tgfake.Server, card tgfake.Message) {
	t.Helper()
	tg.WaitFor(t, 60*time.Second, "the card to say signed in", func() bool {
		for _, m := range tg.Messages(card.ChatID) {
			if m.ID == card.ID {
				return strings.Contains(m.Plain, "Signed in, for every chat.") && len(m.Keyboard) == 0
			}
		}
		return false
	})
}

// Each user's token expires and is refreshed for that user alone, with no
// card and no new authorization; a user who disconnects in /connections
// has their tokens revoked and is asked to connect again at their next
// call, while the other user's connection goes on.
func TestEachUsersRefreshAndDisconnect(t *testing.T) {
	a := newAccountsEnv(t)
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	for _, u := range []struct {
		chat    int64
		account string
	}{{42, "alice"}, {43, "bob"}} {
		a.tg.Text(u.chat, u.chat, "who am I?")
		_, authURL := connectCard(t, a.tg, u.chat, 0)
		// The first to connect runs the connect tool; the catalog then
		// lists whoami, which the second one's call runs.
		waitAfter(t, a.tg, u.chat, a.tg.Text(u.chat, u.chat, signIn(t, authURL, u.account)), "Seen: ")
	}

	before := a.fake.Counts()
	a.fake.ExpireAccessTokens()
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, "who am I after the expiry?"), "Seen: alice")
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "and me?"), "Seen: bob")
	after := a.fake.Counts()
	if n := after.Refreshes - before.Refreshes; n != 2 {
		t.Errorf("refreshes = %d, want 2 (one per user)", n)
	}
	if after.Authorizations != before.Authorizations || after.RefreshReuses != 0 {
		t.Errorf("after the expiry: %+v, before: %+v", after, before)
	}

	a.tg.Text(42, 42, "/connections")
	card := a.tg.WaitText(t, 42, "Your connections")
	if got := card.Buttons(); !slices.Equal(got, []string{"Disconnect mine=o:42:mine"}) {
		t.Fatalf("alice's /connections buttons: %v", got)
	}
	a.tg.Press(42, 42, card.ID, "o:42:mine")
	a.tg.WaitText(t, 42, "Disconnected from mine: its tokens are deleted and revoked.")
	if len(a.fake.Revoked()) == 0 {
		t.Error("Disconnect revoked nothing at the authorization server")
	}
	asked := a.tg.Text(42, 42, "who am I after disconnecting?")
	_, again := connectCard(t, a.tg, 42, asked)
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "still me?"), "Seen: bob")
	// Connected again (the card answered, the bot stops at once: a turn
	// waiting on a card holds the shutdown for its grace).
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, signIn(t, again, "alice")), "Seen: alice")
}
