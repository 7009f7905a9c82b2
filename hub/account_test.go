package hub_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

const accountsKey = "a-test-key-of-more-than-32-characters!"

// connector connects each user as the account accounts names, through
// the fake's sign-in page and a pasted-back address; a user it has no
// account for declines.
type connector struct {
	m        *oauth.Manager
	accounts map[string]string

	mu    sync.Mutex
	asked map[string]int
	hosts []string
}

func (c *connector) Connect(ctx context.Context, conn mcpgram.Connection) (mcpgram.ElicitAction, error) {
	c.mu.Lock()
	c.asked[conn.Caller.UserID]++
	c.hosts = append(c.hosts, conn.Host())
	account, ok := c.accounts[conn.Caller.UserID]
	c.mu.Unlock()
	if !ok {
		return mcpgram.ElicitDecline, nil
	}
	authURL, err := conn.Begin(ctx, "http://127.0.0.1/oauth/callback", "tag")
	if err != nil {
		return mcpgram.ElicitCancel, err
	}
	back, err := oauthfake.Authorize(ctx, authURL, account)
	if err != nil {
		return mcpgram.ElicitCancel, err
	}
	u, err := url.Parse(back)
	if err != nil {
		return mcpgram.ElicitCancel, err
	}
	if _, err := c.m.FinishAs(ctx, u.Query(), conn.Server, conn.Caller.UserID); err != nil {
		return mcpgram.ElicitCancel, err
	}
	return mcpgram.ElicitAccept, nil
}

func (c *connector) times(user string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked[user]
}

// startAccounts starts a hub with a per-user protected server, whose
// users connect through c.
func startAccounts(t *testing.T, idle time.Duration) (*hub.Hub, *connector, *oauthfake.Server) {
	t.Helper()
	fake := oauthfake.Start(t)
	db := testenv.SQLite(t, "")
	m, err := oauth.New(oauth.Options{Store: db, Key: accountsKey})
	if err != nil {
		t.Fatal(err)
	}
	c := &connector{m: m, accounts: map[string]string{"u1": "alice", "u2": "bob"}, asked: map[string]int{}}
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"mine": map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 10, "oauth": map[string]any{"account": "user"}},
	})
	opts := fastOptions()
	opts.Auth, opts.SessionIdle = m, idle
	return testenv.StartAsking(t, path, opts, hub.Askers{Connector: c}), c, fake
}

func toolNames(h *hub.Hub, server string) []string {
	var names []string
	for _, s := range h.Catalog().Servers {
		if s.Name == server {
			for _, t := range s.Tools {
				names = append(names, t.Name)
			}
		}
	}
	return names
}

// Each user's calls carry that user's own token: the first call of each
// asks that user to connect, later ones do not; until someone connected
// the catalog lists the connect tool, and after it the server's own
// (what connecting tells the model leaves out an MCP App's own tool).
// Nothing of a user is kept but the session.
func TestEachUserActsAsTheirOwnAccount(t *testing.T) {
	h, c, fake := startAccounts(t, time.Minute)
	fake.AddAppTool()
	if got := toolNames(h, "mine"); len(got) != 1 || got[0] != hub.ConnectTool {
		t.Fatalf("tools before anyone connected = %v, want [connect]", got)
	}
	info := h.Catalog().Servers[0]
	if !info.PerUser || info.Status != mcpgram.StatusRunning {
		t.Errorf("server = %+v, want running and per-user", info)
	}
	u1 := mcpgram.Caller{UserID: "u1", ChatID: "c1"}
	// The connect tool's result is the model's to read: it lists the tools
	// the model may call, without the app's own.
	res, err := h.CallTool(t.Context(), u1, "mine", hub.ConnectTool, nil)
	if err != nil || !strings.HasSuffix(res.Text(), "Its tools: [whoami].") {
		t.Fatalf("connect = %v, %v; want the model's tools listed", res, err)
	}
	if got := toolNames(h, "mine"); !slices.Equal(got, []string{"whoami", "whoami_panel"}) {
		t.Fatalf("tools once connected = %v, want [whoami whoami_panel]", got)
	}
	for _, tc := range []struct{ user, want string }{{"u1", "alice"}, {"u2", "bob"}, {"u1", "alice"}, {"u2", "bob"}} {
		res, err := h.CallTool(t.Context(), mcpgram.Caller{UserID: tc.user, ChatID: "c-" + tc.user}, "mine", "whoami", nil)
		if err != nil || res.Text() != tc.want {
			t.Fatalf("whoami for %s = %v, %v; want %s", tc.user, res, err, tc.want)
		}
	}
	if a, b := c.times("u1"), c.times("u2"); a != 1 || b != 1 {
		t.Errorf("asked to connect u1 %d times and u2 %d, want once each", a, b)
	}
	if got := h.Sessions("mine"); got != 2 {
		t.Errorf("sessions = %d, want 2", got)
	}
	// Each user's turn to open a session is let go once the calls end.
	if got := h.UserLocks("mine"); got != 0 {
		t.Errorf("user locks kept after the calls = %d, want 0", got)
	}
	if c.hosts[0] != "127.0.0.1" {
		t.Errorf("host shown = %q, want 127.0.0.1", c.hosts[0])
	}
}

// A user who declines to connect gets no call, and the error says so;
// a call for nobody is refused without asking anyone.
func TestDeclinedConnection(t *testing.T) {
	h, c, fake := startAccounts(t, time.Minute)
	_, err := h.CallTool(t.Context(), mcpgram.Caller{UserID: "u3", ChatID: "c3"}, "mine", hub.ConnectTool, nil)
	if !errors.Is(err, hub.ErrNotConnected) || !strings.Contains(err.Error(), "declined") {
		t.Fatalf("call of a user who declined = %v, want ErrNotConnected saying declined", err)
	}
	if n := fake.Counts().CodeExchanges; n != 0 {
		t.Errorf("code exchanges = %d, want 0", n)
	}
	if _, err := h.CallTool(t.Context(), mcpgram.Caller{ChatID: "c3"}, "mine", hub.ConnectTool, nil); err == nil {
		t.Error("a call for no user went through")
	}
	if n := c.times(""); n != 0 {
		t.Errorf("asked %d times to connect nobody", n)
	}
}

// A user's session closes once idle, and the next call opens a new one
// without asking to connect again (the sign-in is kept).
func TestIdleSessionCloses(t *testing.T) {
	h, c, _ := startAccounts(t, 100*time.Millisecond)
	u1 := mcpgram.Caller{UserID: "u1", ChatID: "c1"}
	if _, err := h.CallTool(t.Context(), u1, "mine", hub.ConnectTool, nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the idle session to close", func() bool { return h.Sessions("mine") == 0 })
	res, err := h.CallTool(t.Context(), u1, "mine", "whoami", nil)
	if err != nil || res.Text() != "alice" {
		t.Fatalf("whoami after the idle close = %v, %v", res, err)
	}
	if n := c.times("u1"); n != 1 {
		t.Errorf("asked u1 to connect %d times, want once", n)
	}
}

// The account setting is checked: a value other than operator or user,
// and user on a stdio server, fail that entry saying why.
func TestAccountSetting(t *testing.T) {
	h, _ := startHub(t, map[string]any{
		"odd":   map[string]any{"type": "streamableHttp", "url": "http://127.0.0.1:1/mcp", "oauth": map[string]any{"account": "everyone"}},
		"local": map[string]any{"command": "true", "oauth": map[string]any{"account": "user"}},
	})
	want := map[string]string{"odd": `oauth.account "everyone": want "operator"`, "local": `a stdio server cannot act as each user's account`}
	for _, s := range h.Catalog().Servers {
		if s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, want[s.Name]) {
			t.Errorf("%s: %s %q, want failed saying %q", s.Name, s.Status, s.Error, want[s.Name])
		}
	}
}

// BeginConnect begins a user's sign-in outside a call, bound to that
// user and tagged: finished, the user's next call runs without being
// asked to connect. It begins nobody's sign-in, nor one of a server that
// is not per-user, nor the operator's to a per-user server.
func TestBeginConnect(t *testing.T) {
	h, c, _ := startAccounts(t, time.Minute)
	m := c.m
	authURL, host, err := h.BeginConnect(t.Context(), "mine", "u1", "http://127.0.0.1/oauth/callback", "7")
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("BeginConnect = %q, %q, %v", authURL, host, err)
	}
	back, err := oauthfake.Authorize(t.Context(), authURL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(back)
	done, err := m.FinishAs(t.Context(), u.Query(), "mine", "u1")
	if err != nil || done.Tag != "7" {
		t.Fatalf("FinishAs = %+v, %v; want u1's sign-in tagged 7", done, err)
	}
	u1 := mcpgram.Caller{UserID: "u1", ChatID: "c1"}
	if _, err := h.CallTool(t.Context(), u1, "mine", hub.ConnectTool, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := h.CallTool(t.Context(), u1, "mine", "whoami", nil); err != nil || res.Text() != "alice" {
		t.Fatalf("whoami = %v, %v; want alice", res, err)
	}
	if n := c.times("u1"); n != 0 {
		t.Errorf("u1 was asked to connect %d times, want none", n)
	}
	for _, bad := range []struct{ name, server, user string }{
		{"nobody", "mine", ""},
		{"no such server", "nowhere", "u1"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			if _, _, err := h.BeginConnect(t.Context(), bad.server, bad.user, "http://127.0.0.1/oauth/callback", "7"); err == nil {
				t.Error("begun")
			}
		})
	}
	if _, _, err := h.SignIn(t.Context(), "mine", "http://127.0.0.1/oauth/callback", "7"); err == nil {
		t.Error("the operator's sign-in to a per-user server was begun")
	}
}
