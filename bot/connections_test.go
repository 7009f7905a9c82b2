package bot_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

const connKey = "a-test-key-of-more-than-32-characters!"

// connect signs user ("" the operator) in to server, the protected
// server fake, through m, as its first request does.
func connect(t *testing.T, m *oauth.Manager, fake *oauthfake.Server, server, user string) {
	t.Helper()
	hc := &http.Client{Transport: m.Transport(server, user, fake.URL()+"/mcp", mcpgram.OAuthConfig{}, nil)}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, fake.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("sign in %q to %s: %v", user, server, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign in %q to %s: %s", user, server, resp.Status)
	}
}

func hasGrant(t *testing.T, db store.OAuth, server string, user int64) bool {
	t.Helper()
	id := ""
	if user != 0 {
		id = strconv.FormatInt(user, 10)
	}
	list, err := db.ListOAuthGrants(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(list, func(g store.OAuthGrantInfo) bool { return g.Server == server })
}

// /connections lists the user's own sign-ins, and nobody else's, with a
// Disconnect button each, which revokes and deletes the sign-in and says
// so on the card; presses for another user's sign-in, for the operator's
// by a non-admin, forged or in a group are refused and change nothing;
// a second press finds the sign-in gone; an admin also sees and signs out
// the operator's sign-ins; in a group, the command lists nothing.
func TestConnections(t *testing.T) {
	tracker, docs := oauthfake.Start(t), oauthfake.Start(t)
	docs.SetRevokeFault(oauthfake.NoEndpoint)
	fake := tgfake.New(t)
	db := testenv.SQLite(t, "")
	m, err := oauth.New(oauth.Options{Store: db, Key: connKey})
	if err != nil {
		t.Fatal(err)
	}
	m.SetInteractive(oauth.Loopback(oauthfake.Browse))
	startBotWith(t, fake, db, false, newFakeAgent(), newFakeHub(1), func(o *bot.Options) { o.Connections = m })
	for _, c := range []struct {
		fake   *oauthfake.Server
		server string
		user   int64
	}{{tracker, "tracker", alice}, {docs, "docs", alice}, {tracker, "tracker", bob}, {tracker, "tracker", 0}} {
		id := ""
		if c.user != 0 {
			id = strconv.FormatInt(c.user, 10)
		}
		connect(t, m, c.fake, c.server, id)
	}

	fake.Text(alice, alice, "/connections")
	card := waitText(t, fake, alice, "Your connections")
	if !strings.Contains(card.Plain, "tracker, since") || !strings.Contains(card.Plain, "docs, since") || strings.Contains(card.Plain, "everyone") {
		t.Errorf("alice's card: %q", card.Plain)
	}
	if got, want := card.Buttons(), []string{"Disconnect docs=o:2:docs", "Disconnect tracker=o:2:tracker"}; !slices.Equal(got, want) {
		t.Errorf("buttons = %q, want %q", got, want)
	}

	// Refused: bob pressing alice's, alice the operator's, a forgery, and
	// a press in a group.
	for _, p := range []struct {
		chat, user int64
		data, want string
	}{
		{bob, bob, "o:2:tracker", "someone else's"},
		{alice, alice, "o:0:tracker", "Only admins"},
		{alice, alice, "o:2:#nothex", "no longer valid"},
		{-100, alice, "o:2:docs", "private chat"},
	} {
		cb := fake.Press(p.chat, p.user, card.ID, p.data)
		if ans := waitAnswer(t, fake, cb); !ans.ShowAlert || !strings.Contains(ans.Text, p.want) {
			t.Errorf("press %s by %d in %d = %+v, want an alert saying %q", p.data, p.user, p.chat, ans, p.want)
		}
	}
	if !hasGrant(t, db, "tracker", alice) || !hasGrant(t, db, "docs", alice) || !hasGrant(t, db, "tracker", 0) || len(tracker.Revoked()) != 0 {
		t.Fatalf("a refused press changed something: revocations %+v", tracker.Revoked())
	}

	cb := fake.Press(alice, alice, card.ID, "o:2:tracker")
	if ans := waitAnswer(t, fake, cb); ans.ShowAlert || ans.Text != "Disconnected from tracker." {
		t.Errorf("Disconnect answered %+v", ans)
	}
	after := waitText(t, fake, alice, "Disconnected from tracker: its tokens are deleted and revoked.")
	if after.ID != card.ID || !strings.Contains(after.Plain, "docs, since") || strings.Contains(after.Plain, "tracker, since") {
		t.Errorf("card after Disconnect: %q", after.Plain)
	}
	if hasGrant(t, db, "tracker", alice) || !hasGrant(t, db, "tracker", bob) || !hasGrant(t, db, "tracker", 0) {
		t.Error("Disconnect deleted the wrong sign-ins")
	}
	if got := tracker.Revoked(); len(got) != 2 || !got[0].Known || !got[1].Known {
		t.Errorf("revocations = %+v, want alice's two tokens", got)
	}
	cb = fake.Press(alice, alice, card.ID, "o:2:tracker")
	if ans := waitAnswer(t, fake, cb); !strings.Contains(ans.Text, "already gone") {
		t.Errorf("second press = %+v, want already gone", ans)
	}
	cb = fake.Press(alice, alice, card.ID, "o:2:docs")
	waitAnswer(t, fake, cb)
	waitText(t, fake, alice, "Disconnected from docs: its tokens are deleted (its server offers no revocation")
	waitText(t, fake, alice, "You have not connected your own account to any server.")

	// A revocation that fails: deleted, and the card says so.
	tracker.SetRevokeFault(oauthfake.RevokeErrors)
	fake.Text(bob, bob, "/connections")
	bobs := waitText(t, fake, bob, "Your connections")
	waitAnswer(t, fake, fake.Press(bob, bob, bobs.ID, "o:3:tracker"))
	waitText(t, fake, bob, "did not confirm revoking them")
	if hasGrant(t, db, "tracker", bob) {
		t.Error("a failed revocation kept bob's sign-in")
	}
	tracker.SetRevokeFault(oauthfake.RevokeWorks)

	// The admin sees the operator's sign-ins, and signs everyone out.
	fake.Text(admin, admin, "/connections")
	adm := waitText(t, fake, admin, "Signed in for everyone")
	if !slices.Contains(adm.Buttons(), "Sign everyone out of tracker=o:0:tracker") {
		t.Errorf("admin's buttons = %q", adm.Buttons())
	}
	waitAnswer(t, fake, fake.Press(admin, admin, adm.ID, "o:0:tracker"))
	waitText(t, fake, admin, "Disconnected from tracker: its tokens are deleted and revoked.")
	if hasGrant(t, db, "tracker", 0) {
		t.Error("the operator's sign-in is still there")
	}

	// In a group: nothing listed.
	connect(t, m, docs, "docs", "2")
	fake.Text(-100, alice, "/connections")
	waitText(t, fake, -100, "send /connections to me in a private chat")
	for _, msg := range fake.Messages(-100) {
		if strings.Contains(msg.Plain, "docs") || len(msg.Buttons()) > 0 {
			t.Errorf("the group saw %q %q", msg.Plain, msg.Buttons())
		}
	}
}
