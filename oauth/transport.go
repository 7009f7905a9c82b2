package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// load returns the grant of k for serverURL as the store has it now
// (none: ok false), unsealing it only when it is not the one remembered.
func (m *Manager) load(ctx context.Context, k grantKey, serverURL string) (grant, int64, bool, error) {
	sealer, err := m.sealing(false)
	if errors.Is(err, mcpgram.ErrNoKey) {
		return grant{}, 0, false, nil
	}
	if err != nil {
		return grant{}, 0, false, err
	}
	row, err := m.store.GetOAuthGrant(ctx, k.server, k.user)
	if errors.Is(err, store.ErrNotFound) {
		m.forget(k)
		m.markUnusable(k, nil)
		return grant{}, 0, false, nil
	}
	if err != nil {
		return grant{}, 0, false, err
	}
	m.mu.Lock()
	c, ok := m.cache[k]
	m.mu.Unlock()
	g := c.g
	if !ok || !bytes.Equal(c.sealed, row.Sealed) {
		g = grant{}
		plain, err := sealer.Open(row.Sealed, k.where())
		if err == nil {
			err = json.Unmarshal(plain, &g)
		}
		if err != nil {
			m.forget(k)
			// Every request reads the grant: one warning is enough.
			if m.markUnusable(k, row.Sealed) {
				m.log.Warn("stored sign-in unusable", "server", k.server, "user", k.user, "err", err)
			}
			return grant{}, row.Version, false, nil
		}
		m.markUnusable(k, nil)
		m.remember(k, g, row.Sealed)
	}
	if g.ServerURL != serverURL {
		// Signed in to another URL of that name: not this server's.
		return grant{}, row.Version, false, nil
	}
	return g, row.Version, true, nil
}

// current returns the grant to send now, as the store has it (a grant
// another process refreshed or deleted is seen at the next request),
// refreshed first if it is about to expire.
func (m *Manager) current(ctx context.Context, k grantKey, serverURL string) (grant, int64, bool, error) {
	g, v, ok, err := m.load(ctx, k, serverURL)
	if err != nil || !ok {
		return grant{}, v, false, err
	}
	if !g.Token.expiresWithin(m.now(), refreshEarly) || g.Token.RefreshToken == "" {
		return g, v, true, nil
	}
	ng, nv, err := m.refresh(ctx, k, serverURL, v)
	if err != nil {
		m.log.Warn("token refresh failed", "server", k.server, "err", err)
		if g.Token.expiresWithin(m.now(), 0) {
			return grant{}, v, false, nil
		}
		return g, v, true, nil // still good for a while
	}
	return ng, nv, true, nil
}

// refresh gets a fresh token for the grant of k at version seen: it
// claims the refresh, or, if another process holds the claim, waits for
// the grant it writes. A grant that moved past seen is taken as it is.
func (m *Manager) refresh(ctx context.Context, k grantKey, serverURL string, seen int64) (grant, int64, error) {
	wait := 50 * time.Millisecond
	deadline := m.now().Add(refreshClaim + 5*time.Second)
	for {
		g, v, ok, err := m.load(ctx, k, serverURL)
		switch {
		case err != nil:
			return grant{}, 0, err
		case !ok:
			return grant{}, 0, fmt.Errorf("%w: no sign-in to %s", mcpgram.ErrSignInRequired, k.server)
		case v != seen:
			return g, v, nil
		case g.Token.RefreshToken == "":
			return grant{}, 0, fmt.Errorf("%w: the sign-in to %s cannot be refreshed", mcpgram.ErrSignInRequired, k.server)
		}
		claimed, err := m.store.ClaimOAuthRefresh(ctx, k.server, k.user, v, m.now().Add(refreshClaim))
		if err != nil {
			return grant{}, 0, err
		}
		if claimed {
			return m.spend(ctx, k, g, v)
		}
		if m.now().After(deadline) {
			return grant{}, 0, errors.New("another process is refreshing the token and has not finished")
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return grant{}, 0, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// spend refreshes g's token, under this process's claim, and stores it.
func (m *Manager) spend(ctx context.Context, k grantKey, g grant, v int64) (grant, int64, error) {
	// The refresh token is spent whatever the caller does meanwhile.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshClaim)
	defer cancel()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.Token.RefreshToken}}
	if g.Resource != "" {
		form.Set("resource", g.Resource)
	}
	r, err := m.reachOf(ctx, g.ServerURL)
	if err != nil {
		return grant{}, 0, err
	}
	tok, err := tokenRequest(ctx, m.httpFor(r), g.TokenEndpoint, g.Client, form, g.Token.Scopes, m.now())
	var oe *Error
	if errors.As(err, &oe) && oe.Code == "invalid_grant" {
		// The refresh token is dead: only a new sign-in helps.
		_ = m.SignOut(ctx, k.server, k.user)
		return grant{}, 0, fmt.Errorf("%w: the sign-in to %s has ended (%w)", mcpgram.ErrSignInRequired, k.server, err)
	}
	if err != nil {
		return grant{}, 0, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = g.Token.RefreshToken
	}
	g.Token = tok
	sealer, err := m.sealing(false)
	if err != nil {
		return grant{}, 0, err
	}
	plain, _ := json.Marshal(g)
	sealed := sealer.Seal(plain, k.where())
	nv, err := m.store.UpdateOAuthGrant(ctx, k.server, k.user, v, sealed)
	if errors.Is(err, store.ErrNotFound) {
		// Disconnected while this refresh was under way: the tokens it
		// got must not outlive the sign-in.
		if _, rerr := m.revoke(ctx, k, g); rerr != nil {
			m.log.Warn("revocation of the tokens of a refresh that outlived its sign-in failed", "server", k.server, "user", k.user, "err", rerr)
		}
		return grant{}, 0, fmt.Errorf("%w: the sign-in to %s was disconnected", mcpgram.ErrSignInRequired, k.server)
	}
	if err != nil {
		return grant{}, 0, err
	}
	m.remember(k, g, sealed)
	m.log.Info("token refreshed", "server", k.server, "user", k.user, "expires", tok.Expiry)
	return g, nv, nil
}

// signIn runs req with whoever is there to, one at a time per server and
// user; a sign-in that another finished while this one waited is taken
// as it is.
func (m *Manager) signIn(ctx context.Context, req Request, seen int64) (grant, int64, error) {
	k := grantKey{req.Server, req.UserID}
	m.mu.Lock()
	run := m.interactive
	lock := m.signing[k]
	if lock == nil {
		lock = &sync.Mutex{}
		m.signing[k] = lock
	}
	m.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	if g, v, ok, err := m.load(ctx, k, req.ServerURL); err != nil {
		return grant{}, 0, err
	} else if ok && v != seen && covers(g.Token.Scopes, union(req.Challenge.Scope, req.Scopes)) {
		return g, v, nil
	}
	if err := m.canSeal(); err != nil {
		return grant{}, 0, err
	}
	if run == nil && m.isUnusable(k) {
		return grant{}, 0, fmt.Errorf("%w: %w: set the key it was made with, or sign in to %s again", mcpgram.ErrSignInRequired, mcpgram.ErrKeyChanged, req.Server)
	}
	if run == nil {
		return grant{}, 0, fmt.Errorf("%w: %s asks for a sign-in: run `mcpgram mcp login %s`", mcpgram.ErrSignInRequired, req.Server, req.Server)
	}
	if err := run(ctx, m, req); err != nil {
		return grant{}, 0, err
	}
	g, v, ok, err := m.load(ctx, k, req.ServerURL)
	if err == nil && !ok {
		err = fmt.Errorf("%w: the sign-in to %s was not kept", mcpgram.ErrSignInRequired, req.Server)
	}
	return g, v, err
}

// Transport returns the HTTP transport of server (whose URL is
// serverURL) for userID: it sends the sign-in's access token, refreshed
// before it expires; on a 401 it refreshes, or signs in, and sends the
// request again; on a 403 for more scope it signs in for that scope, at
// most maxStepUps times per request.
func (m *Manager) Transport(server, userID, serverURL string, cfg mcpgram.OAuthConfig, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{m: m, k: grantKey{server, userID}, url: serverURL, cfg: cfg, base: base}
}

type authTransport struct {
	m    *Manager
	k    grantKey
	url  string
	cfg  mcpgram.OAuthConfig
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if req.Body != nil && req.GetBody == nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.Body, _ = req.GetBody()
	}
	var a attempt
	var err error
	if t.machine() {
		a.g, a.v, a.have, err = t.m.machineCurrent(ctx, t.k, t.url, t.cfg)
	} else {
		a.g, a.v, a.have, err = t.m.current(ctx, t.k, t.url)
	}
	if err != nil {
		return nil, err
	}
	for again := false; ; again = true {
		resp, err := t.send(req, a.g, a.have, again)
		if err != nil {
			return nil, err
		}
		retry, err := t.again(ctx, resp, &a)
		if err != nil {
			return nil, err
		}
		if !retry {
			return resp, nil
		}
	}
}

// An attempt is where one request stands: the grant it sends, and what
// it did already to be let in.
type attempt struct {
	g                   grant
	v                   int64
	have                bool
	refreshed, signedIn bool
	stepUps             int
}

// again decides, from the answer resp, whether to send the request again
// and with what: after a 401, once refreshed and once signed in; after a
// 403 asking for scope the token lacks, signed in for it, maxStepUps
// times. An answer not sent again is left to the caller, unread.
func (t *authTransport) again(ctx context.Context, resp *http.Response, a *attempt) (bool, error) {
	ch, _ := ParseChallenge(resp.Header)
	sign := Request{SignIn: mcpgram.SignIn{Server: t.k.server, UserID: t.k.user, ServerURL: t.url, Config: t.cfg}, Challenge: ch}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		if a.have && !a.refreshed && a.g.Token.RefreshToken != "" {
			// Refused: another process may hold a newer token, or a
			// refresh may help.
			a.refreshed = true
			if g, v, err := t.m.refresh(ctx, t.k, t.url, a.v); err == nil {
				drain(resp)
				a.g, a.v = g, v
				return true, nil
			}
		}
		if a.signedIn {
			return false, nil
		}
		a.signedIn = true
	case resp.StatusCode == http.StatusForbidden && ch.Error == "insufficient_scope" && a.have &&
		a.stepUps < maxStepUps && !covers(a.g.Token.Scopes, ch.Scope):
		a.stepUps++
		sign.Scopes = a.g.Token.Scopes
	default:
		return false, nil
	}
	drain(resp)
	var g grant
	var v int64
	var err error
	if t.machine() {
		g, v, err = t.m.machineToken(ctx, sign, a.v)
	} else {
		g, v, err = t.m.signIn(ctx, sign, a.v)
	}
	if err != nil {
		return false, err
	}
	a.g, a.v, a.have = g, v, true
	return true, nil
}

// machine reports whether the server is reached by a grant that gets
// mcpgram its token itself (see credentials.go) rather than a person's
// sign-in.
func (t *authTransport) machine() bool { return isMachine(t.cfg) }

// send sends req with g's token, if have, as a fresh copy when again.
func (t *authTransport) send(req *http.Request, g grant, have, again bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if again && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	if have {
		r.Header.Set("Authorization", "Bearer "+g.Token.AccessToken)
	}
	return t.base.RoundTrip(r)
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocument))
	_ = resp.Body.Close()
}
