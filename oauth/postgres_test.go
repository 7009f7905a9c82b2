package oauth_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Two instances on one PostgreSQL database: at each expiry, with both
// racing past it, one refreshes, the other takes what it wrote, and no
// refresh token is sent twice; the refresh one makes the other sees
// without a 401.
func TestPostgresRefreshAcrossInstances(t *testing.T) {
	dsn := testenv.Postgres(t)
	e := newEnv(t)
	c := &clock{t: time.Now()}
	a := e.manager(t, testenv.OpenPostgres(t, dsn), testKey, true, c.now)
	b := e.manager(t, testenv.OpenPostgres(t, dsn), testKey, false, c.now)
	signIn(t, e, a)
	signIn(t, e, b) // b reads the sign-in a kept
	for round := 1; round <= 3; round++ {
		c.add(59*time.Minute + 30*time.Second) // 30 s left of the hour
		var wg sync.WaitGroup
		for _, m := range []*oauth.Manager{a, b, a, b, a, b} {
			wg.Go(func() {
				if code, err := get(t, m, e); err != nil || code != http.StatusOK {
					t.Errorf("round %d: request near expiry = %d, %v", round, code, err)
				}
			})
		}
		wg.Wait()
		cnt := e.fake.Counts()
		if cnt.Refreshes != round || cnt.RefreshReuses != 0 || cnt.Authorizations != 1 || cnt.Unauthorized != 1 {
			t.Fatalf("round %d: counts = %+v; want %d refreshes, none reused, one authorization, and only the first request's 401", round, cnt, round)
		}
		c.add(time.Minute) // the old token's hour is over
	}
}

// A Disconnect on one instance is seen by the other at its next
// request: it sends the deleted token no more, though the authorization
// server (which offers no revocation here) would still take it.
func TestPostgresDisconnectAcrossInstances(t *testing.T) {
	dsn := testenv.Postgres(t)
	e := newEnv(t)
	e.fake.SetRevokeFault(oauthfake.NoEndpoint)
	a := e.manager(t, testenv.OpenPostgres(t, dsn), testKey, true, nil)
	b := e.manager(t, testenv.OpenPostgres(t, dsn), testKey, false, nil)
	signIn(t, e, a)
	signIn(t, e, b)
	unauthorized := e.fake.Counts().Unauthorized
	if revoked, err := b.Disconnect(t.Context(), "remote", ""); err != nil || revoked {
		t.Fatalf("Disconnect = %v, %v; want deleted, not revoked", revoked, err)
	}
	a.SetInteractive(nil)
	if _, err := get(t, a, e); !errors.Is(err, mcpgram.ErrSignInRequired) {
		t.Errorf("request from the other instance = %v, want ErrSignInRequired", err)
	}
	if n := e.fake.Counts().Unauthorized; n != unauthorized+1 {
		t.Errorf("401s = %d, want %d: the other instance sent a token", n, unauthorized+1)
	}
	if _, err := a.Disconnect(t.Context(), "remote", ""); !errors.Is(err, mcpgram.ErrNotSignedIn) {
		t.Errorf("Disconnect on the other instance = %v, want ErrNotSignedIn", err)
	}
}
