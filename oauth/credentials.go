package oauth

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
)

// The client credentials grant (OAuth 2.1 §4.2, the MCP extension
// io.modelcontextprotocol/oauth-client-credentials): a server entry
// whose "oauth" says "grant": "client_credentials" is reached as mcpgram
// itself, a machine with the client id and secret or private key the
// operator registered, and nobody signs in. The first request goes
// without a token; the server's 401 leads, by the same discovery as a
// sign-in, to its authorization server's token endpoint, where mcpgram
// gets a token with its credentials. It gets another a minute before
// that one expires, on a 401, and for more scope on a 403 asking for it.
//
// Such a token is kept in memory only, per Manager: getting another is
// as cheap as a refresh, so nothing is sealed into the store, no
// OAUTH_KEY is needed, and no process ever waits on another's.

// A machine is the client credentials token of one server, and what
// getting the next needs.
type machine struct {
	mu   sync.Mutex // held while a token is got
	g    grant
	v    int64 // counts the tokens got, as a grant's version does
	have bool
	d    discovery
	// client is the credentials g was got with: a token got with others
	// (the settings changed) is not used.
	client string
}

// machineOf returns the machine of k, made on first use.
func (m *Manager) machineOf(k grantKey) *machine {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.machines == nil {
		m.machines = map[grantKey]*machine{}
	}
	mc := m.machines[k]
	if mc == nil {
		mc = &machine{}
		m.machines[k] = mc
	}
	return mc
}

// credentialsID names the credentials of cfg for serverURL, to tell a
// token got with them from one got with others; it holds no secret.
func credentialsID(serverURL string, cfg mcpgram.OAuthConfig) string {
	p := cfg.IdP
	return fmt.Sprintf("%s|%s|%s|%s|%x|%x|%s|%s|%s|%x|%x|%s", serverURL, cfg.Grant, cfg.ClientID, cfg.AuthMethod, digest(cfg.ClientSecret), digest(string(cfg.PrivateKey)),
		p.Issuer, p.TokenEndpoint, p.ClientID, digest(p.ClientSecret), digest(p.IDToken), p.IDTokenFile)
}

// machineCurrent returns the client credentials token of k to send now:
// none before the first is got (the server's 401 says where to get it),
// a new one when the last is about to expire.
func (m *Manager) machineCurrent(ctx context.Context, k grantKey, serverURL string, cfg mcpgram.OAuthConfig) (grant, int64, bool, error) {
	mc := m.machineOf(k)
	mc.mu.Lock()
	g, v, have := mc.g, mc.v, mc.have && mc.client == credentialsID(serverURL, cfg)
	mc.mu.Unlock()
	if !have || !g.Token.expiresWithin(m.now(), refreshEarly) {
		return g, v, have, nil
	}
	req := Request{SignIn: mcpgram.SignIn{Server: k.server, UserID: k.user, ServerURL: serverURL, Config: cfg}}
	ng, nv, err := m.machineToken(ctx, req, v)
	if err != nil {
		m.log.Warn("getting a new token by client credentials failed", "server", k.server, "err", err)
		if g.Token.expiresWithin(m.now(), 0) {
			return grant{}, v, false, nil
		}
		return g, v, true, nil // still good for a while
	}
	return ng, nv, true, nil
}

// machineToken gets a token for req by the client credentials grant,
// unless another request got one since the token at version seen that
// covers what req asks for. It discovers the token endpoint from req's
// challenge, or takes the one it found before.
func (m *Manager) machineToken(ctx context.Context, req Request, seen int64) (grant, int64, error) {
	k := grantKey{req.Server, req.UserID}
	id := credentialsID(req.ServerURL, req.Config)
	mc := m.machineOf(k)
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.have && mc.client == id && mc.v != seen && covers(mc.g.Token.Scopes, union(req.Challenge.Scope, req.Scopes)) {
		return mc.g, mc.v, nil
	}
	r, err := m.reachOf(ctx, req.ServerURL)
	if err != nil {
		return grant{}, 0, fmt.Errorf("get a token for %s: %w", req.Server, err)
	}
	d := mc.d
	if mc.client != id || d.AS.TokenEndpoint == "" || req.Challenge.ResourceMetadata != "" {
		if d, err = m.discover(ctx, r, req.ServerURL, req.Challenge); err != nil {
			return grant{}, 0, fmt.Errorf("get a token for %s: %w", req.Server, err)
		}
	}
	scopes := scopesFor(req, d)
	c := preRegistered(req.Config, d.AS)
	form, err := m.grantForm(ctx, req.Config, d, scopes)
	if err != nil {
		return grant{}, 0, fmt.Errorf("get a token for %s by %s: %w", req.Server, grantName(req.Config.Grant), err)
	}
	if c.AuthMethod == authJWT {
		a, err := assertion(req.Config, d.AS, m.now())
		if err != nil {
			return grant{}, 0, fmt.Errorf("get a token for %s: %w", req.Server, err)
		}
		form.Set("client_assertion_type", assertionType)
		form.Set("client_assertion", a)
	}
	tok, err := tokenRequest(ctx, m.httpFor(r), d.AS.TokenEndpoint, c, form, scopes, m.now())
	if err != nil {
		return grant{}, 0, fmt.Errorf("get a token for %s by %s: %w", req.Server, grantName(req.Config.Grant), err)
	}
	// Another is got as cheaply as a refresh: none is kept.
	tok.RefreshToken = ""
	mc.g = grant{Token: tok, TokenEndpoint: d.AS.TokenEndpoint, Issuer: d.AS.Issuer, Resource: d.Resource, ServerURL: req.ServerURL}
	mc.v++
	mc.have, mc.d, mc.client = true, d, id
	m.log.Info("got a token by "+grantName(req.Config.Grant), "server", k.server, "expires", tok.Expiry)
	return mc.g, mc.v, nil
}

// grantForm is the token request of cfg's grant for the resource of d
// and scopes: client credentials, or the JWT bearer grant of the ID-JAG
// the identity provider gives for them (enterprise.go).
func (m *Manager) grantForm(ctx context.Context, cfg mcpgram.OAuthConfig, d discovery, scopes []string) (url.Values, error) {
	form := url.Values{"grant_type": {mcpgram.GrantClientCredentials}}
	if cfg.Grant == mcpgram.GrantEnterprise {
		jag, err := m.idJAG(ctx, cfg.IdP, d, scopes)
		if err != nil {
			return nil, err
		}
		form = url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag}}
	}
	form.Set("resource", d.Resource)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return form, nil
}

// isMachine reports whether cfg's grant gets mcpgram its token itself,
// with nobody signing in: client credentials, or enterprise-managed.
func isMachine(cfg mcpgram.OAuthConfig) bool {
	return cfg.Grant == mcpgram.GrantClientCredentials || cfg.Grant == mcpgram.GrantEnterprise
}

// grantName names cfg's grant in logs and errors.
func grantName(grant string) string {
	if grant == mcpgram.GrantEnterprise {
		return "enterprise-managed authorization"
	}
	return "client credentials"
}
