package oauth_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

const testKey = "a-test-key-of-more-than-32-characters!"

// env is a protected server with its authorization server, and a
// database file that sign-ins are kept in.
type env struct {
	fake     *oauthfake.Server
	dbPath   string
	settings string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{fake: oauthfake.Start(t), dbPath: filepath.Join(t.TempDir(), "mcpgram.db")}
	e.settings = filepath.Join(t.TempDir(), "mcp-settings.json")
	body := `{"mcpServers": {"remote": {"type": "streamableHttp", "url": "` + e.fake.URL() + `/mcp", "timeout": 10}}}`
	if err := os.WriteFile(e.settings, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// open opens a handle on the database, as one process would.
func (e *env) open(t *testing.T) *sqlite.DB {
	t.Helper()
	db := testenv.SQLite(t, e.dbPath)
	return db
}

func (e *env) manager(t *testing.T, st store.OAuth, key string, interactive bool, now func() time.Time) *oauth.Manager {
	t.Helper()
	m, err := oauth.New(oauth.Options{Store: st, Key: key, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if interactive {
		m.SetInteractive(oauth.Loopback(oauthfake.Browse))
	}
	return m
}

// startHub starts a hub with the remote server, signing in through m.
func (e *env) startHub(t *testing.T, m *oauth.Manager) *hub.Hub {
	t.Helper()
	h, err := hub.New(e.settings, hub.Options{Auth: m, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func whoami(t *testing.T, h *hub.Hub) (string, error) {
	t.Helper()
	res, err := h.CallTool(t.Context(), mcpgram.Caller{UserID: "u1", ChatID: "c1"}, "remote", "whoami", nil)
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// The operator signs in once when the server asks, through the browser
// and the loopback port; the call carries the operator's token; the
// database holds no token in the clear; and a restart (a new process on
// the same database) keeps the sign-in.
func TestOperatorSignInAndRestart(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	h := e.startHub(t, e.manager(t, db, testKey, true, nil))
	if got, err := whoami(t, h); err != nil || got != "operator" {
		t.Fatalf("whoami = %q, %v; want operator", got, err)
	}
	if c := e.fake.Counts(); c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 {
		t.Errorf("counts after the sign-in = %+v; want one registration, authorization and exchange", c)
	}
	_ = h.Close()
	_ = db.Close()
	raw, err := os.ReadFile(e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if wal, err := os.ReadFile(e.dbPath + "-wal"); err == nil {
		raw = append(raw, wal...)
	}
	for _, tok := range e.fake.Tokens() {
		if bytes.Contains(raw, []byte(tok)) {
			t.Errorf("the database holds the token %q in the clear", tok)
		}
	}

	// Restart: nobody is there to sign in, and nobody needs to.
	h2 := e.startHub(t, e.manager(t, e.open(t), testKey, false, nil))
	if got, err := whoami(t, h2); err != nil || got != "operator" {
		t.Fatalf("whoami after a restart = %q, %v; want operator", got, err)
	}
	if c := e.fake.Counts(); c.Authorizations != 1 {
		t.Errorf("authorizations after the restart = %d, want still 1", c.Authorizations)
	}
}

// Without someone to sign in, a server that asks fails saying how to
// sign in; with another OAUTH_KEY, a kept sign-in does not open, and is
// not used.
func TestSignInRequired(t *testing.T) {
	e := newEnv(t)
	h := e.startHub(t, e.manager(t, e.open(t), testKey, false, nil))
	info, _ := h.Catalog().Server("remote")
	if info.Status == mcpgram.StatusRunning || !strings.Contains(info.Error, "mcpgram mcp login remote") {
		t.Errorf("server = %s %q; want it failed, saying to run mcpgram mcp login remote", info.Status, info.Error)
	}
	if c := e.fake.Counts(); c.Authorizations != 0 || c.Unauthorized == 0 {
		t.Errorf("counts = %+v; want 401s and no authorization", c)
	}

	other := newEnv(t)
	db := other.open(t)
	signIn(t, other, other.manager(t, db, testKey, true, nil))
	var log testenv.Buffer
	m, err := oauth.New(oauth.Options{Store: db, Key: "another-key-of-more-than-32-characters", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := get(t, m, other); !errors.Is(err, mcpgram.ErrSignInRequired) || !errors.Is(err, mcpgram.ErrKeyChanged) {
			t.Errorf("request with another key = %v, want ErrSignInRequired and ErrKeyChanged", err)
		}
	}
	// Every request reads the sign-in again: the log says it once.
	if n := strings.Count(log.String(), "stored sign-in unusable"); n != 1 {
		t.Errorf("the log warned %d times of the sign-in, want once:\n%s", n, log.String())
	}
}

// Without OAUTH_KEY, a sign-in is refused, saying how to set one.
func TestNoKey(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, e.open(t), "", true, nil)
	_, err := get(t, m, e)
	if !errors.Is(err, mcpgram.ErrNoKey) || !strings.Contains(err.Error(), "OAUTH_KEY_FILE") {
		t.Errorf("request without a key = %v, want ErrNoKey saying how to set OAUTH_KEY", err)
	}
	if _, err := oauth.New(oauth.Options{Store: e.open(t), Key: "short"}); err == nil {
		t.Error("a 5-character key was taken")
	}
}

// signIn signs in through m's transport, and fails the test if that
// does not work.
func signIn(t *testing.T, e *env, m *oauth.Manager) {
	t.Helper()
	if code, err := get(t, m, e); err != nil || code != http.StatusOK {
		t.Fatalf("first request = %d, %v; want 200", code, err)
	}
}

// get sends the MCP server a ping through m's transport.
func get(t *testing.T, m *oauth.Manager, e *env) (int, error) {
	t.Helper()
	hc := &http.Client{Transport: m.Transport("remote", "", e.fake.URL()+"/mcp", mcpgram.OAuthConfig{}, nil)}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.fake.URL()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// A clock that a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A token about to expire is refreshed before it is sent, by one of two
// processes that both find it so (the other takes what the first wrote),
// and a refresh token is never sent twice; a token the server ends early
// is refreshed on the 401.
func TestRefresh(t *testing.T) {
	e := newEnv(t)
	c := &clock{t: time.Now()}
	a := e.manager(t, e.open(t), testKey, true, c.now)
	b := e.manager(t, e.open(t), testKey, false, c.now)
	signIn(t, e, a)
	signIn(t, e, b) // b reads the sign-in a kept
	if n := e.fake.Counts().Refreshes; n != 0 {
		t.Fatalf("refreshes before expiry = %d", n)
	}
	c.add(59*time.Minute + 30*time.Second) // 30 s left of the hour
	var wg sync.WaitGroup
	for _, m := range []*oauth.Manager{a, b, a, b} {
		wg.Go(func() {
			if code, err := get(t, m, e); err != nil || code != http.StatusOK {
				t.Errorf("request near expiry = %d, %v", code, err)
			}
		})
	}
	wg.Wait()
	if cnt := e.fake.Counts(); cnt.Refreshes != 1 || cnt.RefreshReuses != 0 || cnt.Authorizations != 1 {
		t.Errorf("counts = %+v; want one refresh, no refresh token sent twice, one authorization", cnt)
	}

	e.fake.ExpireAccessTokens()
	if code, err := get(t, b, e); err != nil || code != http.StatusOK {
		t.Fatalf("request after the server ended the token = %d, %v", code, err)
	}
	if cnt := e.fake.Counts(); cnt.Refreshes != 2 || cnt.Authorizations != 1 {
		t.Errorf("counts = %+v; want a second refresh and no new authorization", cnt)
	}
	// a's remembered token is the ended one: the 401 sends it to the
	// store, where b's refresh is.
	if code, err := get(t, a, e); err != nil || code != http.StatusOK {
		t.Fatalf("request from the other process = %d, %v", code, err)
	}
	if cnt := e.fake.Counts(); cnt.Refreshes != 2 || cnt.RefreshReuses != 0 {
		t.Errorf("counts = %+v; want still two refreshes, none reused", cnt)
	}
}

// A callback with a forged state, one replayed, one whose flow expired
// or from another issuer changes nothing; the real one signs in, once.
func TestCallbackState(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	m := e.manager(t, db, testKey, false, nil)
	req := oauth.Request{SignIn: mcpgram.SignIn{Server: "remote", ServerURL: e.fake.URL() + "/mcp"}}
	back := approve(t, m, req)

	forged := cloneValues(back)
	forged.Set("state", "forged"+back.Get("state"))
	if _, err := m.Finish(t.Context(), forged); !errors.Is(err, mcpgram.ErrUnknownState) {
		t.Errorf("forged state = %v, want ErrUnknownState", err)
	}
	if _, err := m.Finish(t.Context(), url.Values{"code": back["code"]}); !errors.Is(err, mcpgram.ErrUnknownState) {
		t.Errorf("no state = %v, want ErrUnknownState", err)
	}
	if _, err := db.GetOAuthGrant(t.Context(), "remote", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("grant after forged callbacks = %v, want none", err)
	}
	done, err := m.Finish(t.Context(), back)
	if err != nil || done.Server != "remote" || done.UserID != "" {
		t.Fatalf("Finish = %+v, %v", done, err)
	}
	g, err := db.GetOAuthGrant(t.Context(), "remote", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(t.Context(), back); !errors.Is(err, mcpgram.ErrUnknownState) {
		t.Errorf("replayed state = %v, want ErrUnknownState", err)
	}
	if g2, _ := db.GetOAuthGrant(t.Context(), "remote", ""); g2.Version != g.Version {
		t.Errorf("the replay changed the grant: version %d, was %d", g2.Version, g.Version)
	}
	if c := e.fake.Counts(); c.CodeExchanges != 1 {
		t.Errorf("code exchanges = %d, want 1", c.CodeExchanges)
	}

	// A flow begun more than its lifetime ago is over.
	past := e.manager(t, db, testKey, false, func() time.Time { return time.Now().Add(-oauth.FlowLifetime - time.Minute) })
	old := approve(t, past, req)
	if _, err := past.Finish(t.Context(), old); !errors.Is(err, mcpgram.ErrUnknownState) {
		t.Errorf("expired state = %v, want ErrUnknownState", err)
	}

	// An answer naming another issuer (RFC 9207) is refused.
	mixed := approve(t, m, req)
	mixed.Set("iss", "https://evil.example")
	if _, err := m.Finish(t.Context(), mixed); err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Errorf("another issuer = %v, want a refusal naming the issuer", err)
	}
	if g3, _ := db.GetOAuthGrant(t.Context(), "remote", ""); g3.Version != g.Version {
		t.Errorf("a refused answer changed the grant")
	}
}

// Pending names whose a sign-in under way is, and the tag of what waits
// for it, and leaves it under way: the same answer then finishes it, and
// a state that names no flow is ErrUnknownState.
func TestPendingNamesTheFlow(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	m := e.manager(t, db, testKey, false, nil)
	back := approve(t, m, oauth.Request{SignIn: mcpgram.SignIn{Server: "remote", UserID: "42", ServerURL: e.fake.URL() + "/mcp", Tag: "17"}})
	got, err := m.Pending(t.Context(), back)
	if want := (mcpgram.FinishedSignIn{Server: "remote", UserID: "42", Tag: "17"}); err != nil || got != want {
		t.Fatalf("Pending = %+v, %v; want %+v", got, err, want)
	}
	if done, err := m.Finish(t.Context(), back); err != nil || done.Tag != "17" {
		t.Errorf("Finish after Pending = %+v, %v; want the flow finished", done, err)
	}
	if _, err := m.Pending(t.Context(), back); !errors.Is(err, mcpgram.ErrUnknownState) {
		t.Errorf("Pending of a finished flow = %v, want ErrUnknownState", err)
	}
}

// approve begins a sign-in and has the authorization server approve it,
// returning the query it sends the browser back with.
func approve(t *testing.T, m *oauth.Manager, req oauth.Request) url.Values {
	t.Helper()
	authURL, _, err := m.Begin(t.Context(), req, "http://127.0.0.1:9/callback")
	if err != nil {
		t.Fatal(err)
	}
	return browse(t, nil, authURL)
}

// browse is the person's browser at authURL, through tr (nil: Go's
// default): the authorization server approves, and browse returns the
// query it sends the browser back with.
func browse(t *testing.T, tr http.RoundTripper, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, authURL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization answered %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	return loc.Query()
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
