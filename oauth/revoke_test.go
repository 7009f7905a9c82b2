package oauth_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// loggedManager is a Manager over st whose log the test reads.
func loggedManager(t *testing.T, st store.OAuth, key string, revokeIn time.Duration) (*oauth.Manager, *testenv.Buffer) {
	t.Helper()
	var log testenv.Buffer
	m, err := oauth.New(oauth.Options{Store: st, Key: key, RevokeTimeout: revokeIn,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return m, &log
}

// Disconnect revokes the refresh and the access token at the
// authorization server, as the client they were issued to, deletes the
// grant, and the next request, from this process or another that used
// the grant, carries no token; a second Disconnect finds nothing.
func TestDisconnectRevokes(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	a := e.manager(t, db, testKey, true, nil)
	b := e.manager(t, e.open(t), testKey, false, nil)
	signIn(t, e, a)
	signIn(t, e, b) // b remembers the grant
	issued := e.fake.Tokens()
	at, rt := issued[len(issued)-2], issued[len(issued)-1]

	a.SetInteractive(nil) // nobody to sign in again
	revoked, err := a.Disconnect(t.Context(), "remote", "")
	if err != nil || !revoked {
		t.Fatalf("Disconnect = %v, %v; want revoked", revoked, err)
	}
	got := e.fake.Revoked()
	if len(got) != 2 || got[0].Token != rt || got[0].Hint != "refresh_token" || got[1].Token != at || got[1].Hint != "access_token" ||
		!got[0].Known || !got[1].Known || got[0].ClientID == "" {
		t.Errorf("revocations = %+v; want the refresh token %s then the access token %s, both known, with the client id", got, rt, at)
	}
	if _, err := db.GetOAuthGrant(t.Context(), "remote", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("grant after Disconnect = %v, want none", err)
	}
	for name, m := range map[string]*oauth.Manager{"a": a, "b": b} {
		if _, err := get(t, m, e); !errors.Is(err, mcpgram.ErrSignInRequired) {
			t.Errorf("request from %s after Disconnect = %v, want ErrSignInRequired", name, err)
		}
	}
	if _, err := a.Disconnect(t.Context(), "remote", ""); !errors.Is(err, mcpgram.ErrNotSignedIn) {
		t.Errorf("second Disconnect = %v, want ErrNotSignedIn", err)
	}
	if n := e.fake.RevokeRequests(); n != 2 {
		t.Errorf("revocation requests = %d, want still 2", n)
	}
}

// With no revocation endpoint, Disconnect deletes the grant and says
// nothing was revoked; another process that remembered the grant, whose
// token the server would still take, sends it no more.
func TestDisconnectWithoutRevocation(t *testing.T) {
	e := newEnv(t)
	e.fake.SetRevokeFault(oauthfake.NoEndpoint)
	a := e.manager(t, e.open(t), testKey, true, nil)
	b := e.manager(t, e.open(t), testKey, false, nil)
	signIn(t, e, a)
	signIn(t, e, b)
	revoked, err := a.Disconnect(t.Context(), "remote", "")
	if err != nil || revoked {
		t.Fatalf("Disconnect = %v, %v; want not revoked, no error", revoked, err)
	}
	if n := e.fake.RevokeRequests(); n != 0 {
		t.Errorf("revocation requests = %d, want 0", n)
	}
	unauthorized := e.fake.Counts().Unauthorized
	if _, err := get(t, b, e); !errors.Is(err, mcpgram.ErrSignInRequired) {
		t.Errorf("request from the other process = %v, want ErrSignInRequired", err)
	}
	// b sent no token: the server's 401 proves it asked without one.
	if n := e.fake.Counts().Unauthorized; n != unauthorized+1 {
		t.Errorf("401s = %d, want %d: the other process must not send the deleted token", n, unauthorized+1)
	}
}

// A revocation endpoint that errors, answers garbage or hangs (until the
// RevokeTimeout, the context given having no deadline) leaves the grant deleted all the same, and the failure
// is returned as a RevokeError and logged, without a token in either.
func TestDisconnectRevocationFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault oauthfake.RevokeFault
		want  string
	}{
		{"errors", oauthfake.RevokeErrors, "temporarily_unavailable"},
		{"garbage", oauthfake.RevokeGarbage, "500 Internal Server Error"},
		{"hangs", oauthfake.RevokeHangs, "deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			db := e.open(t)
			signIn(t, e, e.manager(t, db, testKey, true, nil))
			m, log := loggedManager(t, db, testKey, time.Second)
			e.fake.SetRevokeFault(tc.fault)
			revoked, err := m.Disconnect(t.Context(), "remote", "")
			var re *mcpgram.RevokeError
			if revoked || !errors.As(err, &re) || re.Server != "remote" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Disconnect = %v, %v; want a RevokeError saying %q", revoked, err, tc.want)
			}
			if _, err := db.GetOAuthGrant(t.Context(), "remote", ""); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("grant after a failed revocation = %v, want none", err)
			}
			if !strings.Contains(log.String(), "token revocation failed") {
				t.Errorf("the failure was not logged:\n%s", log)
			}
			for _, tok := range e.fake.Tokens() {
				if strings.Contains(log.String(), tok) || strings.Contains(err.Error(), tok) {
					t.Errorf("a token reached the log or the error")
				}
			}
		})
	}
}

// A grant kept under another OAUTH_KEY cannot be opened, so not revoked,
// but Disconnect deletes it and says so.
func TestDisconnectAnotherKey(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	signIn(t, e, e.manager(t, db, testKey, true, nil))
	m := e.manager(t, db, "another-key-of-more-than-32-characters", false, nil)
	var re *mcpgram.RevokeError
	if _, err := m.Disconnect(t.Context(), "remote", ""); !errors.As(err, &re) {
		t.Fatalf("Disconnect = %v, want a RevokeError", err)
	}
	if _, err := db.GetOAuthGrant(t.Context(), "remote", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("grant = %v, want none", err)
	}
	if n := e.fake.RevokeRequests(); n != 0 {
		t.Errorf("revocation requests = %d, want 0", n)
	}
}

// A grant made before mcpgram kept the revocation endpoint is revoked at
// the one its issuer's metadata lists.
func TestDisconnectOldGrant(t *testing.T) {
	e := newEnv(t)
	db := e.open(t)
	m := e.manager(t, db, testKey, true, nil)
	signIn(t, e, m)
	sealer, err := oauth.NewSealer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	row, err := db.GetOAuthGrant(t.Context(), "remote", "")
	if err != nil {
		t.Fatal(err)
	}
	const where = "grant|remote|"
	plain, err := sealer.Open(row.Sealed, where)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(plain, &g); err != nil {
		t.Fatal(err)
	}
	if _, ok := g["revocation_endpoint"]; !ok {
		t.Fatal("a new grant keeps no revocation_endpoint")
	}
	delete(g, "revocation_endpoint")
	old, _ := json.Marshal(g)
	if _, err := db.PutOAuthGrant(t.Context(), "remote", "", sealer.Seal(old, where)); err != nil {
		t.Fatal(err)
	}
	if code, err := get(t, m, e); err != nil || code != http.StatusOK {
		t.Fatalf("request with the old grant = %d, %v", code, err)
	}
	if revoked, err := m.Disconnect(t.Context(), "remote", ""); err != nil || !revoked {
		t.Fatalf("Disconnect of an old grant = %v, %v; want revoked", revoked, err)
	}
	if got := e.fake.Revoked(); len(got) != 2 {
		t.Errorf("revocations = %+v, want 2", got)
	}
}
