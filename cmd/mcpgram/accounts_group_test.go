package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

const group = -100

// groupCard waits for the group's card other than skip that holds want
// and leads to a private chat, and returns it with the /start message
// its button sends there.
func groupCard(t *testing.T, tg *tgfake.Server, want string, skip int) (tgfake.Message, string) {
	t.Helper()
	card := formCard(t, tg, group, want, skip)
	for _, row := range card.Keyboard {
		for _, b := range row {
			if b.URL == nil || !strings.HasPrefix(b.Text, "🔒 Open private chat") {
				continue
			}
			payload, ok := strings.CutPrefix(*b.URL, "https://t.me/mcpgram_bot?start=")
			if !ok {
				t.Fatalf("the button leads to %q, not the bot's private chat", *b.URL)
			}
			return card, "/start " + payload
		}
	}
	t.Fatalf("no Open private chat button on %q: %v", card.Plain, card.Buttons())
	return card, ""
}

// noSignInLink fails the test if any message of chat, or any of its
// buttons, holds an address of the authorization server at asURL or a
// sign-in's state.
func noSignInLink(t *testing.T, tg *tgfake.Server, chat int64, asURL string) {
	t.Helper()
	for _, m := range tg.Messages(chat) {
		if m.FromID != tgfake.BotUser.ID {
			continue // what members wrote (and the bot deleted)
		}
		texts := []string{m.Text, m.Plain}
		for _, row := range m.Keyboard {
			for _, b := range row {
				if b.URL != nil {
					texts = append(texts, *b.URL)
				}
			}
		}
		for _, s := range texts {
			if strings.Contains(s, asURL) || strings.Contains(s, "state=") {
				t.Errorf("message %d of chat %d holds a sign-in link: %q", m.ID, chat, s)
			}
		}
	}
}

// closedCard waits for card to show want, without its buttons.
func closedCard(t *testing.T, tg *tgfake.Server, card tgfake.Message, want string) {
	t.Helper()
	tg.WaitFor(t, 60*time.Second, fmt.Sprintf("card %d to show %q", card.ID, want), func() bool {
		for _, m := range tg.Messages(card.ChatID) {
			if m.ID == card.ID {
				return strings.Contains(m.Plain, want) && len(m.Keyboard) == 0
			}
		}
		return false
	})
}

// usePublicURL has the browser come back to PUBLIC_URL: a TLS proxy in
// front of HTTP_LISTEN, as in production. It returns PUBLIC_URL and the
// browser.
func usePublicURL(t *testing.T, a *accountsEnv) (string, *http.Client) {
	t.Helper()
	addr := freeAddr(t)
	backend, _ := url.Parse("http://" + addr)
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	t.Cleanup(proxy.Close)
	a.env["HTTP_LISTEN"] = addr
	a.env["PUBLIC_URL"] = proxy.URL
	return proxy.URL, proxy.Client()
}

// earlyLink begins, through the bot's database, a sign-in of user 42 to
// mine bound to the card open in the group, whose browser comes back to
// publicURL, and returns its link.
func earlyLink(t *testing.T, a *accountsEnv, publicURL string) string {
	t.Helper()
	db, err := sqlite.Open(t.Context(), a.env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	forms, err := db.OpenForms(t.Context(), fmt.Sprint(group))
	if err != nil || len(forms) != 1 {
		t.Fatalf("the group's open forms: %v, %v", forms, err)
	}
	m, err := oauth.New(oauth.Options{Store: db, Key: accountsKey})
	if err != nil {
		t.Fatal(err)
	}
	req := mcpgram.SignIn{Server: "mine", UserID: "42", ServerURL: a.fake.URL() + "/mcp", Tag: fmt.Sprint(forms[0].ID)}
	link, err := m.BeginSignIn(t.Context(), req, nil, publicURL+mcpgram.CallbackPath)
	if err != nil {
		t.Fatal(err)
	}
	return link
}

// In a group, a member's Connect is done in their private chat, and no
// other member can finish it: the group's card names the member, holds
// no sign-in link and leads to the private chat; another member's
// Cancel and deep link change nothing; the member's own link opens the
// card there, once. The address the sign-in ends on, brought back by
// another member (who had the link from the member) in the group or in
// their own chat, or by the member in the group, is deleted and changes
// nothing; pasted by the member in their private chat it connects. Each
// member's calls then carry their own token.
func TestConnectInAGroup(t *testing.T) {
	a := newAccountsEnv(t)
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	asked := a.tg.Text(group, 42, "@mcpgram_bot who am I?")
	card, open := groupCard(t, a.tg, "user42: mine asks you to connect your own account", 0)
	if ans := pressAs(t, a.tg, group, 43, card, "✖️ Cancel"); !strings.Contains(ans.Text, "only they can answer") {
		t.Errorf("another member's Cancel answered %q", ans.Text)
	}
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, open), "That link belongs to another member's request")
	a.tg.Text(42, 42, open)
	_, link := connectCard(t, a.tg, 42, 0)
	waitAfter(t, a.tg, 42, a.tg.Text(42, 42, open), "You opened that request here already")

	stolen := signIn(t, link, "mallory")
	inOwn := a.tg.Text(43, 43, stolen)
	waitAfter(t, a.tg, 43, inOwn, "no sign-in of yours waits for it here")
	inGroup := a.tg.Send(tgfake.Incoming{ChatID: group, UserID: 43, Text: stolen, ReplyTo: card.ID})
	back := signIn(t, link, "alice")
	ownInGroup := a.tg.Send(tgfake.Incoming{ChatID: group, UserID: 42, Text: back, ReplyTo: card.ID})
	waitAfter(t, a.tg, group, ownInGroup, "This is answered in your own chat with me, not here")
	if n := a.fake.Counts().CodeExchanges; n != 0 {
		t.Fatalf("code exchanges before the member's paste in their private chat = %d, want 0", n)
	}
	pasted := a.tg.Text(42, 42, back)
	waitAfter(t, a.tg, group, asked, "Seen: Connected to mine")
	closedCard(t, a.tg, card, "Connected.")
	waitAfter(t, a.tg, group, inGroup, "no sign-in of yours waits for it here")
	if n := a.fake.Counts().CodeExchanges; n != 1 {
		t.Errorf("code exchanges = %d, want 1 (the member's own)", n)
	}
	deleted := map[string]bool{}
	for _, c := range a.tg.Calls("deleteMessage") {
		deleted[c.Params["chat_id"]+"/"+c.Params["message_id"]] = true
	}
	for _, m := range []struct {
		chat int64
		id   int
	}{{43, inOwn}, {group, inGroup}, {group, ownInGroup}, {42, pasted}} {
		if !deleted[fmt.Sprint(m.chat, "/", m.id)] {
			t.Errorf("the pasted address %d in chat %d was not deleted (deleted: %v)", m.id, m.chat, deleted)
		}
	}
	waitAfter(t, a.tg, group, a.tg.Text(group, 42, "@mcpgram_bot who am I now?"), "Seen: alice")

	asked = a.tg.Text(group, 43, "@mcpgram_bot and me?")
	_, open43 := groupCard(t, a.tg, "user43: mine asks you to connect your own account", card.ID)
	a.tg.Text(43, 43, open43)
	_, link43 := connectCard(t, a.tg, 43, 0)
	a.tg.Text(43, 43, signIn(t, link43, "bob"))
	waitAfter(t, a.tg, group, asked, "Seen: bob")
	waitAfter(t, a.tg, group, a.tg.Text(group, 42, "@mcpgram_bot and me again?"), "Seen: alice")
	noSignInLink(t, a.tg, group, a.fake.URL())
}

// In a group with PUBLIC_URL, the member's Connect is finished by the
// browser coming back to PUBLIC_URL only from the card in their private
// chat, the one place its link is shown: a link bound to the card but
// made elsewhere is refused by the page, even once the card is opened;
// the page names
// the member, and once confirmed both cards say connected and the call in
// the group goes on; the group and another member's chat never hold the
// link.
func TestConnectInAGroupThroughPublicURL(t *testing.T) {
	a := newAccountsEnv(t)
	publicURL, browser := usePublicURL(t, a)
	_, stop := startRun(t, a.env, a.path)
	defer stop()
	asked := a.tg.Text(group, 42, "@mcpgram_bot who am I?")
	card, open := groupCard(t, a.tg, "user42: mine asks you to connect your own account", 0)
	waitAfter(t, a.tg, 43, a.tg.Text(43, 43, open), "That link belongs to another member's request")

	// A link for the group's card made before it was opened in 42's
	// private chat (none is, but as an older instance would have shown
	// it in the group): 43 signs in with it as mallory, and the page
	// refuses it, before and after the card is opened.
	early := signIn(t, earlyLink(t, a, publicURL), "mallory")
	if code, body := get(t, browser, early); code != http.StatusBadRequest || !strings.Contains(body, "is finished only from its card in your private chat") {
		t.Errorf("the callback of a link made before the card was opened: %d %q", code, body)
	}
	u, _ := url.Parse(early)
	if code, body := confirm(t, browser, publicURL, u.Query()); code != http.StatusBadRequest {
		t.Errorf("its confirmation posted: %d %q", code, body)
	}
	if n := len(a.fake.Tokens()); n != 0 {
		t.Fatalf("%d tokens issued for a link made before the card was opened", n)
	}

	a.tg.Text(42, 42, open)
	own, link := connectCard(t, a.tg, 42, 0)
	if code, body := confirm(t, browser, publicURL, u.Query()); code != http.StatusBadRequest || !strings.Contains(body, "is finished only from its card in your private chat") {
		t.Errorf("the early link's confirmation, once the card was opened: %d %q", code, body)
	}
	if !strings.Contains(own.Plain, "this card changes once you have") {
		t.Errorf("the private card says:\n%s", own.Plain)
	}
	back := signIn(t, link, "alice")
	page, fields := confirmPage(t, browser, back)
	if !strings.Contains(page, "Telegram user with id <b>42</b>") {
		t.Errorf("the confirmation page says:\n%s", page)
	}
	if code, body := confirm(t, browser, publicURL, fields); code != http.StatusOK || !strings.Contains(body, "Connected to mine") {
		t.Fatalf("callback: %d %q", code, body)
	}
	waitAfter(t, a.tg, group, asked, "Seen: Connected to mine")
	closedCard(t, a.tg, card, "Connected.")
	closedCard(t, a.tg, own, "Connected.")
	if code, body := get(t, browser, back); code != http.StatusBadRequest || !strings.Contains(body, "already used") {
		t.Errorf("replayed callback: %d %q", code, body)
	}
	waitAfter(t, a.tg, group, a.tg.Text(group, 42, "@mcpgram_bot who am I now?"), "Seen: alice")
	noSignInLink(t, a.tg, group, a.fake.URL())
	noSignInLink(t, a.tg, 43, a.fake.URL())
}

// An admin's Sign in pressed on /servers in a group is finished only in
// the admin's private chat, by the paste-back or through PUBLIC_URL:
// another member can press neither Sign in nor the group card's Cancel,
// nor open its link; the group never holds the sign-in's link; once
// signed in, the group's card says so and every chat's calls act as the
// operator's account.
func TestAdminSignsInFromServersInAGroup(t *testing.T) {
	for _, public := range []bool{false, true} {
		t.Run(map[bool]string{false: "paste-back", true: "PUBLIC_URL"}[public], func(t *testing.T) {
			a := newAccountsEnv(t)
			a.env["ADMIN_USER_IDS"] = "42"
			a.path = settings(t, map[string]any{
				"shared": map[string]any{"type": "streamableHttp", "url": a.fake.URL() + "/mcp", "timeout": 10, "autoApprove": []string{"whoami"}},
			})
			var publicURL string
			var browser *http.Client
			if public {
				publicURL, browser = usePublicURL(t, a)
			}
			_, stop := startRun(t, a.env, a.path)
			defer stop()
			screen := pressSignIn(t, a.tg, group)
			card, open := groupCard(t, a.tg, "user42: sign in to shared for every chat", screen.ID)
			if ans := pressAs(t, a.tg, group, 43, card, "✖️ Cancel"); !strings.Contains(ans.Text, "only they can answer") {
				t.Errorf("another member's Cancel answered %q", ans.Text)
			}
			waitAfter(t, a.tg, 43, a.tg.Text(43, 43, open), "That link belongs to another member's request")
			a.tg.Text(42, 42, open)
			own := formCard(t, a.tg, 42, "Connect your account to shared", 0)
			var link string
			for _, row := range own.Keyboard {
				for _, b := range row {
					if b.URL != nil {
						link = *b.URL
					}
				}
			}
			back := signIn(t, link, "ops")
			if public {
				if code, body := comeBack(t, browser, publicURL, back); code != http.StatusOK || !strings.Contains(body, "Signed in to shared for every chat") {
					t.Fatalf("callback: %d %q", code, body)
				}
			} else {
				a.tg.Text(42, 42, back)
			}
			a.tg.WaitText(t, group, "Signed in; shared is reconnected.")
			closedCard(t, a.tg, card, "Signed in, for every chat.")
			noSignInLink(t, a.tg, group, a.fake.URL())
			waitAfter(t, a.tg, 43, a.tg.Text(43, 43, "who is the shared account?"), "Seen: ops")
		})
	}
}
