package oauthfake

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// An IdP is a company's identity provider, for enterprise-managed
// authorization (SEP-990): it issues ID tokens to its client (IDToken)
// and, at its token endpoint, exchanges one (RFC 8693) for an ID-JAG, a
// JWT of type oauth-id-jag+jwt that names the audience and resource
// asked for and the client's id at the MCP server's authorization
// server, which trusts the IdP (Server.TrustIdP). Its issuer's metadata
// is at the OpenID Connect well-known URL.
type IdP struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey
	// client and secret are mcpgram's client at the IdP (no secret: a
	// public client, which names itself); asClient, its id at the
	// authorization server, which the ID-JAGs name.
	client, secret, asClient string

	mu     sync.Mutex
	posted []Posted
	issued []string
	answer func(form url.Values) (int, any)
}

// A Posted is a token request as a fake received it: its form, and the
// client its Basic authentication named ("" for none).
type Posted struct {
	Form        url.Values
	BasicClient string
}

// StartIdP starts an IdP on 127.0.0.1, stopped when the test ends.
func StartIdP(t testing.TB, client, secret, asClient string) *IdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &IdP{key: key, client: client, secret: secret, asClient: asClient}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": p.URL(), "token_endpoint": p.URL() + "/token",
			"grant_types_supported": []string{grantTokenExchange}})
	})
	mux.HandleFunc("POST /token", p.exchange)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the IdP's issuer; its token endpoint is URL()+"/token".
func (p *IdP) URL() string { return p.srv.URL }

// Key is the public key the IdP signs with.
func (p *IdP) Key() crypto.PublicKey { return &p.key.PublicKey }

// IDToken returns an ID token of the IdP for its client, about sub,
// good for ttl (expired already when ttl is negative).
func (p *IdP) IDToken(t testing.TB, sub string, ttl time.Duration) string {
	t.Helper()
	now := time.Now()
	claims := jwt.RegisteredClaims{Issuer: p.URL(), Subject: sub, Audience: jwt.ClaimStrings{p.client},
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), ExpiresAt: jwt.NewNumericDate(now.Add(ttl))}
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Posted returns the token exchange requests so far, in order.
func (p *IdP) Posted() []Posted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.posted)
}

// Issued returns the ID-JAGs the IdP gave, for a test to look for where
// they must not be.
func (p *IdP) Issued() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.issued)
}

// SetAnswer makes the IdP answer every exchange with f's status and
// JSON body instead (nil: exchange as it should).
func (p *IdP) SetAnswer(f func(form url.Values) (int, any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = f
}

// exchange answers a token exchange: an ID-JAG for a valid ID token of
// the IdP's client, asked for with every parameter the specification
// requires, else an OAuth error saying what is wrong.
func (p *IdP) exchange(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	basic, _, _ := r.BasicAuth()
	p.mu.Lock()
	p.posted = append(p.posted, Posted{Form: f, BasicClient: basic})
	answer := p.answer
	p.mu.Unlock()
	if answer != nil {
		status, body := answer(f)
		writeJSON(w, status, body)
		return
	}
	jag, code, why := p.idJAG(f)
	if why != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": why})
		return
	}
	p.mu.Lock()
	p.issued = append(p.issued, jag)
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": jag, "issued_token_type": tokenTypeIDJAG, "token_type": "N_A", "expires_in": 300})
}

// idJAG checks the exchange f and signs its ID-JAG, or says which OAuth
// error to answer and why.
func (p *IdP) idJAG(f url.Values) (jag, code, why string) {
	switch {
	case f.Get("grant_type") != grantTokenExchange:
		return "", "unsupported_grant_type", "grant_type " + f.Get("grant_type")
	case f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token" || f.Get("requested_token_type") != tokenTypeIDJAG:
		return "", "invalid_request", "subject_token_type or requested_token_type"
	case f.Get("audience") == "" || f.Get("resource") == "":
		return "", "invalid_request", "no audience or resource"
	case f.Get("client_id") != p.client || f.Get("client_secret") != p.secret:
		return "", "invalid_client", "wrong client id or secret"
	}
	var idt jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(f.Get("subject_token"), &idt, func(*jwt.Token) (any, error) { return &p.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(p.URL()), jwt.WithAudience(p.client), jwt.WithExpirationRequired())
	if err != nil {
		return "", "invalid_grant", "subject_token: " + err.Error()
	}
	now := time.Now()
	claims := jwt.MapClaims{"iss": p.URL(), "sub": idt.Subject, "aud": f.Get("audience"), "resource": f.Get("resource"),
		"client_id": p.asClient, "jti": random(), "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if sc := f.Get("scope"); sc != "" {
		claims["scope"] = sc
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["typ"] = idJAGType
	s, err := tok.SignedString(p.key)
	if err != nil {
		return "", "server_error", fmt.Sprint(err)
	}
	return s, "", ""
}
