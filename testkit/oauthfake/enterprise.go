package oauthfake

import (
	"crypto"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// Enterprise-managed authorization (SEP-990): the authorization server
// takes an ID-JAG of an IdP it trusts as a JWT bearer grant (RFC 7523)
// from the client the ID-JAG names, authenticated as a Machine.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	idJAGType          = "oauth-id-jag+jwt"
)

// TrustIdP makes the authorization server take the ID-JAGs that the IdP
// of issuer signs with key. Their tokens are of the ID-JAG's subject.
func (s *Server) TrustIdP(issuer string, key crypto.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idps[issuer] = key
}

// BearerPosted returns the JWT bearer token requests so far, in order.
func (s *Server) BearerPosted() []Posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bearer)
}

// jwtBearer answers a JWT bearer token request f: a token for the
// subject of its ID-JAG, or invalid_client for a client that does not
// authenticate as a Machine, or invalid_grant for an ID-JAG that is not
// one of a trusted IdP for this server and this client; s.mu is held.
func (s *Server) jwtBearer(w http.ResponseWriter, r *http.Request, f url.Values) {
	basic, _, _ := r.BasicAuth()
	s.bearer = append(s.bearer, Posted{Form: f, BasicClient: basic})
	m, why := s.authenticate(r, f)
	if why != "" {
		s.refusals = append(s.refusals, why)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": why})
		return
	}
	sub, why := s.checkIDJAG(f.Get("assertion"), m.ID)
	if why != "" {
		s.refusals = append(s.refusals, why)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": why})
		return
	}
	s.counts.JWTBearer++
	s.giveMachineToken(w, tokenInfo{subject: sub, scopes: strings.Fields(f.Get("scope"))})
}

// checkIDJAG checks an ID-JAG as the specification's processing rules
// say: of type oauth-id-jag+jwt, signed by a trusted IdP, for this
// authorization server, this MCP server and client, not expired, a jti
// never seen before. It returns the subject, or why not.
func (s *Server) checkIDJAG(raw, client string) (sub, why string) {
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		iss, _ := tok.Claims.GetIssuer()
		key, ok := s.idps[iss]
		if !ok {
			return nil, fmt.Errorf("no trusted IdP %q", iss)
		}
		return key, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(s.URL()), jwt.WithExpirationRequired())
	if err != nil {
		return "", "ID-JAG: " + err.Error()
	}
	jti, _ := claims["jti"].(string)
	switch {
	case tok.Header["typ"] != idJAGType:
		return "", fmt.Sprintf("ID-JAG: typ %v", tok.Header["typ"])
	case claims["client_id"] != client:
		return "", fmt.Sprintf("ID-JAG: client_id %v is not the client %q", claims["client_id"], client)
	case claims["resource"] != s.URL()+"/mcp":
		return "", fmt.Sprintf("ID-JAG: resource %v", claims["resource"])
	case jti == "" || s.jtis[jti]:
		return "", fmt.Sprintf("ID-JAG: jti %q missing or used before", jti)
	}
	s.jtis[jti] = true
	sub, _ = claims.GetSubject()
	return sub, ""
}
