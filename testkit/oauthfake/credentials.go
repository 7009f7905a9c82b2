package oauthfake

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// A Machine is a client registered for the client credentials grant,
// authenticated by its Secret (client_secret_basic or client_secret_post)
// or, when Key is set, by a JWT signed with the private half of Key
// (private_key_jwt, RFC 7523 §2.2). Its tokens are of the subject
// "client:" + ID.
type Machine struct {
	ID     string
	Secret string
	Key    crypto.PublicKey
}

// AddMachine registers m for the client credentials grant, and lists the
// grant and its methods in the authorization server's metadata.
func (s *Server) AddMachine(m Machine) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.machines[m.ID] = m
}

// Refusals are why the token endpoint refused client credentials
// requests, in order.
func (s *Server) Refusals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.refusals)
}

// clientCredentials authenticates the client of a client credentials
// request, as RFC 6749 §2.3.1 and RFC 7523 §3 have it, and says what it
// is granted, or why not ("" when granted); s.mu is held.
func (s *Server) clientCredentials(r *http.Request, f url.Values) (tokenInfo, string) {
	m, why := s.authenticate(r, f)
	if why == "" && f.Get("resource") != s.URL()+"/mcp" {
		why = fmt.Sprintf("resource %q", f.Get("resource"))
	}
	if why != "" {
		s.refusals = append(s.refusals, why)
		return tokenInfo{}, why
	}
	s.counts.ClientCredentials++
	return tokenInfo{subject: "client:" + m.ID, scopes: strings.Fields(f.Get("scope"))}, ""
}

// authenticate finds the machine the request authenticates as, or says
// why none.
func (s *Server) authenticate(r *http.Request, f url.Values) (Machine, string) {
	if id, secret, ok := r.BasicAuth(); ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
		return s.bySecret(id, secret)
	}
	if f.Has("client_secret") {
		return s.bySecret(f.Get("client_id"), f.Get("client_secret"))
	}
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return Machine{}, "no client authentication"
	}
	return s.byAssertion(f.Get("client_assertion"))
}

func (s *Server) bySecret(id, secret string) (Machine, string) {
	m, ok := s.machines[id]
	if !ok || m.Key != nil || m.Secret != secret {
		return Machine{}, "wrong client id or secret"
	}
	return m, ""
}

// byAssertion checks a client assertion: signed by the key of the client
// its sub names, with the algorithm of that key; iss the same client; aud
// this authorization server's issuer; not expired, and good for ten
// minutes at most; a jti never seen before.
func (s *Server) byAssertion(raw string) (Machine, string) {
	var m Machine
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		sub, _ := tok.Claims.GetSubject()
		var ok bool
		if m, ok = s.machines[sub]; !ok || m.Key == nil {
			return nil, fmt.Errorf("no client %q with a key", sub)
		}
		if want := algOf(m.Key); tok.Method.Alg() != want {
			return nil, fmt.Errorf("signed with %s, want %s", tok.Method.Alg(), want)
		}
		return m.Key, nil
	}, jwt.WithAudience(s.URL()), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	switch {
	case err != nil:
		return Machine{}, "assertion: " + err.Error()
	case claims.Issuer != m.ID:
		return Machine{}, fmt.Sprintf("assertion: iss %q is not the client %q", claims.Issuer, m.ID)
	case claims.ID == "" || s.jtis[claims.ID]:
		return Machine{}, fmt.Sprintf("assertion: jti %q missing or used before", claims.ID)
	case claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute:
		return Machine{}, "assertion: good for more than ten minutes"
	}
	s.jtis[claims.ID] = true
	return m, ""
}

// algOf is the JWS algorithm a client with the public key k signs with.
func algOf(k crypto.PublicKey) string {
	switch k := k.(type) {
	case *ecdsa.PublicKey:
		return map[int]string{256: "ES256", 384: "ES384", 521: "ES512"}[k.Curve.Params().BitSize]
	case *rsa.PublicKey:
		return "RS256"
	case ed25519.PublicKey:
		return "EdDSA"
	}
	return "?"
}
