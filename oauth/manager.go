package oauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// Timing of sign-ins and refreshes.
const (
	// FlowLifetime is how long a sign-in link stays good.
	FlowLifetime = 10 * time.Minute
	// refreshEarly refreshes a token this long before it expires.
	refreshEarly = time.Minute
	// refreshClaim is how long one process has to refresh a token before
	// another may try.
	refreshClaim = 30 * time.Second
	// maxStepUps bounds the sign-ins one request makes for more scope.
	maxStepUps = 2
)

// Options configure a Manager.
type Options struct {
	// Store keeps grants, clients and flows.
	Store store.OAuth
	// Key is OAUTH_KEY; empty: KeyFile's.
	Key string
	// KeyFile, used when Key is empty, is the file of the key: read once
	// it is there, and made, with a new random key, by the first sign-in
	// begun without one (see KeyFileName). Empty too: sign-ins are
	// refused with ErrNoKey.
	KeyFile string
	// ClientMetadataURL is mcpgram's Client ID Metadata Document, its
	// client id for authorization servers that take one; empty: none.
	ClientMetadataURL string
	// HTTPClient asks servers for their challenge (default: 30 s
	// timeout). Authorization servers are reached with its timeout and,
	// from an *http.Transport, its TLS configuration, but through a
	// transport of the Manager's, which checks every address it connects
	// to (see reach.go).
	HTTPClient *http.Client
	// Resolver looks up the hosts of authorization servers (default
	// net.DefaultResolver).
	Resolver *net.Resolver
	// RevokeTimeout bounds the revocation of one sign-in's tokens at
	// Disconnect (default 15 s).
	RevokeTimeout time.Duration
	Logger        *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// A Request is a sign-in as the Manager runs it: the sign-in asked for
// (the server, whose it is, and the Tag handed back by Finish), the
// challenge that asked for it, and the scopes to ask for beyond it (a
// step-up).
type Request struct {
	mcpgram.SignIn
	Challenge Challenge
	Scopes    []string
}

// Interactive runs a sign-in with someone there to do it: it has the
// Manager Begin the flow, sends the person to the URL, and hands what the
// browser came back with to Finish.
type Interactive func(ctx context.Context, m *Manager, req Request) error

// A Manager keeps the sign-ins to MCP servers: it begins and finishes
// them, and hands each server an HTTP transport that carries its token.
type Manager struct {
	store     store.OAuth
	keyFile   string
	hc        *http.Client
	tls       *tls.Config
	resolver  *net.Resolver
	inet      netip.Prefix // a test's internet; see export_test.go
	clientDoc string
	revokeIn  time.Duration
	log       *slog.Logger
	now       func() time.Time

	mu          sync.Mutex
	sealer      *Sealer // see sealing
	interactive Interactive
	cache       map[grantKey]cached
	// unusable holds, per grant, the sealed bytes that did not open with
	// the key: warned of once, and the reason a sign-in is asked for.
	unusable map[grantKey][]byte
	signing  map[grantKey]*sync.Mutex
	clients  map[reach]*http.Client
	machines map[grantKey]*machine // see credentials.go
}

type grantKey struct{ server, user string }

// A cached grant is one the store held, unsealed: it stands for the
// store's row as long as that row holds the same sealed bytes (each
// write seals afresh, with a new nonce), which every use checks, so a
// grant another process refreshed or deleted is seen at once. (Versions
// alone would not do: they start again at 1 after a delete.)
type cached struct {
	g      grant
	sealed []byte
}

// New returns a Manager. A key shorter than MinKeyLength is an error; no
// key (and no key file) is not, but every sign-in then fails with
// ErrNoKey.
func New(opts Options) (*Manager, error) {
	m := &Manager{
		store: opts.Store, keyFile: opts.KeyFile, hc: opts.HTTPClient, resolver: opts.Resolver, clientDoc: opts.ClientMetadataURL,
		revokeIn: opts.RevokeTimeout, log: opts.Logger, now: opts.Now,
		cache: map[grantKey]cached{}, unusable: map[grantKey][]byte{}, signing: map[grantKey]*sync.Mutex{}, clients: map[reach]*http.Client{},
	}
	if m.hc == nil {
		m.hc = &http.Client{Timeout: 30 * time.Second}
	}
	if t, ok := m.hc.Transport.(*http.Transport); ok {
		m.tls = t.TLSClientConfig
	}
	if m.resolver == nil {
		m.resolver = net.DefaultResolver
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.revokeIn <= 0 {
		m.revokeIn = defaultRevokeTimeout
	}
	if m.now == nil {
		m.now = time.Now
	}
	if opts.Key != "" {
		s, err := NewSealer(opts.Key)
		if err != nil {
			return nil, err
		}
		m.sealer = s
	}
	return m, nil
}

// SetInteractive sets who runs sign-ins when a server asks for one (nil:
// nobody, and requests that need one fail with ErrSignInRequired).
func (m *Manager) SetInteractive(f Interactive) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.interactive = f
}

// A flow is what a sign-in under way keeps, sealed, until the browser
// comes back.
type flow struct {
	ServerURL     string   `json:"server_url"`
	Issuer        string   `json:"issuer"`
	IssuerInReply bool     `json:"iss_required,omitempty"`
	TokenEndpoint string   `json:"token_endpoint"`
	Resource      string   `json:"resource"`
	Client        Client   `json:"client"`
	Verifier      string   `json:"verifier"`
	RedirectURI   string   `json:"redirect_uri"`
	Scopes        []string `json:"scopes,omitempty"`
	// Revocation: see grant.Revocation.
	Revocation *string `json:"revocation_endpoint,omitempty"`
	Tag        string  `json:"tag,omitempty"`
}

// digest names a flow in the store by its state, which is not kept.
func digest(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// Begin starts the sign-in req, whose browser is to come back to
// redirectURI, and returns the URL to send the person to and the state
// that URL carries.
func (m *Manager) Begin(ctx context.Context, req Request, redirectURI string) (authURL, state string, err error) {
	sealer, err := m.sealing(true)
	if err != nil {
		return "", "", err
	}
	r, err := m.reachOf(ctx, req.ServerURL)
	if err != nil {
		return "", "", fmt.Errorf("sign in to %s: %w", req.Server, err)
	}
	d, err := m.discover(ctx, r, req.ServerURL, req.Challenge)
	if err != nil {
		return "", "", fmt.Errorf("sign in to %s: %w", req.Server, err)
	}
	scopes := scopesFor(req, d)
	if slices.Contains(d.AS.ScopesSupported, offlineAccess) {
		// A refresh token, so that the operator or user is not sent to
		// sign in again each time the access token expires (SEP-2207;
		// OpenID Connect Core §11). Asked for only where offered: an
		// authorization server that does not know it may refuse it.
		scopes = union(scopes, []string{offlineAccess})
	}
	c, err := m.client(ctx, sealer, r, req, d.AS, redirectURI, scopes)
	if err != nil {
		return "", "", fmt.Errorf("sign in to %s: %w", req.Server, err)
	}
	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return "", "", err
	}
	if state, err = transport.GenerateState(); err != nil {
		return "", "", err
	}
	f := flow{ServerURL: req.ServerURL, Issuer: d.AS.Issuer, IssuerInReply: d.AS.IssuerInResponse, TokenEndpoint: d.AS.TokenEndpoint,
		Resource: d.Resource, Client: c, Verifier: verifier, RedirectURI: redirectURI, Scopes: scopes,
		Revocation: &d.AS.RevocationEndpoint, Tag: req.Tag}
	plain, _ := json.Marshal(f)
	key := digest(state)
	err = m.store.PutOAuthFlow(ctx, store.OAuthFlow{State: key, Server: req.Server, UserID: req.UserID,
		Sealed: sealer.Seal(plain, "flow|"+key), ExpiresAt: m.now().Add(FlowLifetime)})
	if err != nil {
		return "", "", err
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {c.ID},
		"redirect_uri":          {redirectURI},
		"state":                 {state},
		"code_challenge":        {transport.GenerateCodeChallenge(verifier)},
		"code_challenge_method": {"S256"},
		"resource":              {d.Resource},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	sep := "?"
	if strings.Contains(d.AS.AuthorizationEndpoint, "?") {
		sep = "&"
	}
	return d.AS.AuthorizationEndpoint + sep + q.Encode(), state, nil
}

// client is how mcpgram identifies itself for req: the operator's
// pre-registered client, its Client ID Metadata Document where the
// server takes one, a client registered before, or a new registration.
func (m *Manager) client(ctx context.Context, sealer *Sealer, r reach, req Request, as authServer, redirectURI string, scopes []string) (Client, error) {
	if req.Config.ClientID != "" {
		return preRegistered(req.Config, as), nil
	}
	if as.ClientIDMetadataDocs && m.clientDoc != "" {
		return Client{ID: m.clientDoc, AuthMethod: authNone}, nil
	}
	where := "client|" + req.Server + "|" + as.Issuer + "|" + redirectURI
	if sealed, err := m.store.GetOAuthClient(ctx, req.Server, as.Issuer, redirectURI); err == nil {
		var c Client
		if plain, err := sealer.Open(sealed, where); err == nil && json.Unmarshal(plain, &c) == nil && c.ID != "" {
			return c, nil
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return Client{}, err
	}
	if as.RegistrationEndpoint == "" {
		return Client{}, fmt.Errorf("the authorization server %s takes no dynamic registration: register mcpgram with it and set \"oauth\": {\"clientId\": ..., \"clientSecret\": ...} in the server's settings entry", as.Issuer)
	}
	c, err := register(ctx, m.httpFor(r), as, redirectURI, scopes)
	if err != nil {
		return Client{}, err
	}
	plain, _ := json.Marshal(c)
	if err := m.store.PutOAuthClient(ctx, req.Server, as.Issuer, redirectURI, sealer.Seal(plain, where)); err != nil {
		return Client{}, err
	}
	return c, nil
}

// Finish completes the sign-in that the browser came back from with
// query (the redirect's query: code, state, iss, or an error). A state
// that names no flow under way (forged, used or expired) gives
// ErrUnknownState and changes nothing; a flow is finished once.
func (m *Manager) Finish(ctx context.Context, query url.Values) (mcpgram.FinishedSignIn, error) {
	sealer, err := m.sealing(false)
	if err != nil {
		return mcpgram.FinishedSignIn{}, err
	}
	state := query.Get("state")
	if state == "" {
		return mcpgram.FinishedSignIn{}, mcpgram.ErrUnknownState
	}
	key := digest(state)
	sf, err := m.store.TakeOAuthFlow(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return mcpgram.FinishedSignIn{}, mcpgram.ErrUnknownState
	}
	if err != nil {
		return mcpgram.FinishedSignIn{}, err
	}
	done := mcpgram.FinishedSignIn{Server: sf.Server, UserID: sf.UserID}
	var f flow
	plain, err := sealer.Open(sf.Sealed, "flow|"+key)
	if err == nil {
		err = json.Unmarshal(plain, &f)
	}
	if err != nil {
		return done, err
	}
	done.Tag = f.Tag
	if code := query.Get("error"); code != "" {
		return done, fmt.Errorf("sign in to %s: the authorization server refused: %w", sf.Server, &Error{Code: oneLine(code), Description: query.Get("error_description")})
	}
	// RFC 9207: the response names its issuer, which must be ours.
	if iss, ok := query["iss"]; ok || f.IssuerInReply {
		if len(iss) != 1 || strings.TrimSuffix(iss[0], "/") != strings.TrimSuffix(f.Issuer, "/") {
			return done, fmt.Errorf("sign in to %s: the answer came from issuer %q, not %q: refused", sf.Server, oneLine(strings.Join(iss, " ")), f.Issuer)
		}
	}
	code := query.Get("code")
	if code == "" {
		return done, fmt.Errorf("sign in to %s: the answer has no code", sf.Server)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {f.RedirectURI},
		"code_verifier": {f.Verifier}, "resource": {f.Resource}}
	r, err := m.reachOf(ctx, f.ServerURL)
	if err != nil {
		return done, fmt.Errorf("sign in to %s: %w", sf.Server, err)
	}
	tok, err := tokenRequest(ctx, m.httpFor(r), f.TokenEndpoint, f.Client, form, f.Scopes, m.now())
	if err != nil {
		return done, fmt.Errorf("sign in to %s: %w", sf.Server, err)
	}
	g := grant{Token: tok, Client: f.Client, TokenEndpoint: f.TokenEndpoint, Issuer: f.Issuer, Resource: f.Resource, ServerURL: f.ServerURL,
		Revocation: f.Revocation}
	return done, m.put(ctx, sealer, grantKey{sf.Server, sf.UserID}, g)
}

// where names a grant's place, to which its sealing is bound.
func (k grantKey) where() string { return "grant|" + k.server + "|" + k.user }

// put stores g as a new sign-in.
func (m *Manager) put(ctx context.Context, sealer *Sealer, k grantKey, g grant) error {
	plain, _ := json.Marshal(g)
	sealed := sealer.Seal(plain, k.where())
	if _, err := m.store.PutOAuthGrant(ctx, k.server, k.user, sealed); err != nil {
		return err
	}
	m.remember(k, g, sealed)
	m.log.Info("signed in", "server", k.server, "user", k.user, "expires", g.Token.Expiry)
	return nil
}

// remember keeps g, which the store holds sealed as sealed.
func (m *Manager) remember(k grantKey, g grant, sealed []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache[k] = cached{g, sealed}
}

// markUnusable records whether the store's row of k holds sealed bytes
// that do not open (nil: it holds none, or they opened), and reports
// whether those are new, so worth a warning.
func (m *Manager) markUnusable(k grantKey, sealed []byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.unusable[k]
	if sealed == nil {
		delete(m.unusable, k)
		return false
	}
	m.unusable[k] = sealed
	return !had || !bytes.Equal(old, sealed)
}

// isUnusable reports whether the store's row of k, as last read, does
// not open with the key.
func (m *Manager) isUnusable(k grantKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.unusable[k]
	return ok
}

// forget drops what is remembered of k.
func (m *Manager) forget(k grantKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cache, k)
}

// SignIns lists the servers userID ("" the operator) is signed in to,
// with when, and nothing of what the sign-ins hold.
func (m *Manager) SignIns(ctx context.Context, userID string) ([]store.OAuthGrantInfo, error) {
	return m.store.ListOAuthGrants(ctx, userID)
}

// SignOut forgets the sign-in of server for userID, without revoking it
// (see Disconnect).
func (m *Manager) SignOut(ctx context.Context, server, userID string) error {
	m.forget(grantKey{server, userID})
	return m.store.DeleteOAuthGrant(ctx, server, userID)
}
