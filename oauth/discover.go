package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxDocument bounds a metadata document or token response read.
const maxDocument = 1 << 20

// An authServer is what the client needs of an authorization server's
// metadata (RFC 8414).
type authServer struct {
	Issuer                 string   `json:"issuer"`
	AuthorizationEndpoint  string   `json:"authorization_endpoint"`
	TokenEndpoint          string   `json:"token_endpoint"`
	RegistrationEndpoint   string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint     string   `json:"revocation_endpoint,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	AuthMethodsSupported   []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	SigningAlgs            []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethods   []string `json:"code_challenge_methods_supported,omitempty"`
	ClientIDMetadataDocs   bool     `json:"client_id_metadata_document_supported,omitempty"`
	IssuerInResponse       bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	fromDefaults, fromRoot bool
}

// A discovery is what signing in to one server needs to know of it.
type discovery struct {
	// Resource is the resource parameter: the server's identifier.
	Resource string
	// ScopesSupported are those the resource's metadata lists.
	ScopesSupported []string
	AS              authServer
}

// protectedResource is a resource's metadata (RFC 9728).
type protectedResource struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// discover finds the resource's metadata and its authorization server's,
// as the specification orders: the challenge's resource_metadata, the
// path-based well-known URL, the root one; then the authorization
// server's RFC 8414 and OpenID Connect URLs. A server with no resource
// metadata is of the 2025-03-26 revision: its origin is its authorization
// server. Every URL the server or its metadata names must be in r.
func (m *Manager) discover(ctx context.Context, r reach, serverURL string, ch Challenge) (discovery, error) {
	server, err := checkURL(serverURL)
	if err != nil {
		return discovery{}, fmt.Errorf("server URL: %w", err)
	}
	if ch.ResourceMetadata != "" {
		if _, err := m.checkField(ctx, r, "resource_metadata (of the server's challenge)", ch.ResourceMetadata, false); err != nil {
			return discovery{}, fmt.Errorf("refusing to sign in: %w", err)
		}
	}
	hc := m.httpFor(r)
	for _, u := range resourceMetadataURLs(server, ch.ResourceMetadata) {
		var prm protectedResource
		if ok, err := getJSON(ctx, hc, u, &prm); err != nil || !ok {
			continue
		}
		if prm.Resource != "" && !bindsTo(prm.Resource, server) {
			return discovery{}, fmt.Errorf("the resource metadata at %s names %q, not this server (%s): refusing to sign in", u, prm.Resource, serverURL)
		}
		d := discovery{Resource: canonical(server), ScopesSupported: prm.ScopesSupported}
		if prm.Resource != "" {
			d.Resource = prm.Resource
		}
		if len(prm.AuthorizationServers) == 0 {
			return discovery{}, fmt.Errorf("the resource metadata at %s names no authorization server", u)
		}
		if _, err := m.checkField(ctx, r, "authorization_servers", prm.AuthorizationServers[0], false); err != nil {
			return discovery{}, fmt.Errorf("the resource metadata at %s: refusing to sign in: %w", u, err)
		}
		if d.AS, err = authServerMetadata(ctx, hc, prm.AuthorizationServers[0]); err != nil {
			return discovery{}, err
		}
		return d, m.checkServer(ctx, r, d.AS)
	}
	as, err := legacyAuthServer(ctx, hc, server)
	if err != nil {
		return discovery{}, err
	}
	return discovery{Resource: canonical(server), AS: as}, m.checkServer(ctx, r, as)
}

// resourceMetadataURLs are the places of a resource's metadata, in order.
func resourceMetadataURLs(server *url.URL, fromChallenge string) []string {
	var out []string
	if fromChallenge != "" {
		out = append(out, fromChallenge)
	}
	root := server.Scheme + "://" + server.Host + "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		out = append(out, root+p)
	}
	return append(out, root)
}

// authServerMetadata fetches the metadata of the authorization server
// issuer, checks that it names that issuer (RFC 8414 §3.3), and that it
// offers what MCP requires.
func authServerMetadata(ctx context.Context, hc *http.Client, issuer string) (authServer, error) {
	as, err := serverMetadata(ctx, hc, issuer)
	if err != nil {
		return authServer{}, err
	}
	return as, as.check()
}

// serverMetadata fetches the metadata of the authorization server (or
// identity provider) issuer, from the RFC 8414 or the OpenID Connect
// well-known URL, and checks that it names that issuer.
func serverMetadata(ctx context.Context, hc *http.Client, issuer string) (authServer, error) {
	iu, err := checkURL(issuer)
	if err != nil {
		return authServer{}, fmt.Errorf("authorization server: %w", err)
	}
	origin := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.EscapedPath(), "/")
	urls := []string{origin + "/.well-known/oauth-authorization-server" + p, origin + "/.well-known/openid-configuration" + p}
	if p != "" {
		urls = append(urls, origin+p+"/.well-known/openid-configuration")
	}
	for _, u := range urls {
		var as authServer
		ok, err := getJSON(ctx, hc, u, &as)
		if err != nil || !ok {
			continue
		}
		if strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return authServer{}, fmt.Errorf("the authorization server metadata at %s names the issuer %q, not %q: refusing to sign in", u, as.Issuer, issuer)
		}
		return as, nil
	}
	return authServer{}, fmt.Errorf("no authorization server metadata found for %s (tried %s)", issuer, strings.Join(urls, ", "))
}

// legacyAuthServer is the 2025-03-26 revision's discovery: the metadata
// at the server's origin, else the default endpoints there.
func legacyAuthServer(ctx context.Context, hc *http.Client, server *url.URL) (authServer, error) {
	origin := server.Scheme + "://" + server.Host
	var as authServer
	if ok, err := getJSON(ctx, hc, origin+"/.well-known/oauth-authorization-server", &as); err == nil && ok {
		as.fromRoot = true
		return as, as.check()
	}
	return authServer{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
		fromDefaults:          true,
	}, nil
}

// check refuses metadata that does not offer PKCE with S256, as the
// specification requires.
func (as authServer) check() error {
	if !as.fromDefaults && !slices.Contains(as.CodeChallengeMethods, "S256") {
		return fmt.Errorf("authorization server %s does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires: refusing to sign in", as.Issuer)
	}
	return nil
}

// checkServer refuses metadata whose endpoints are not in r: those
// mcpgram posts to (token, registration, revocation), by their scheme
// and every address their host has now; the authorization endpoint,
// which the person's browser opens, by its scheme and a literal address.
// The defaults of a server without metadata are at its own origin.
func (m *Manager) checkServer(ctx context.Context, r reach, as authServer) error {
	if as.fromDefaults {
		return nil
	}
	for _, e := range []struct {
		field, url string
		browser    bool
	}{
		{"authorization_endpoint", as.AuthorizationEndpoint, true},
		{"token_endpoint", as.TokenEndpoint, false},
		{"registration_endpoint", as.RegistrationEndpoint, false},
		{"revocation_endpoint", as.RevocationEndpoint, false},
	} {
		if e.url == "" && e.field != "authorization_endpoint" && e.field != "token_endpoint" {
			continue
		}
		if _, err := m.checkField(ctx, r, e.field, e.url, e.browser); err != nil {
			return fmt.Errorf("the metadata of the authorization server %s: refusing to sign in: %w", as.Issuer, err)
		}
	}
	return nil
}

// getJSON fetches u into v; ok is false when the answer is not 200.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) (ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocument))
		return false, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(v); err != nil {
		return false, fmt.Errorf("%s: %w", u, err)
	}
	return true, nil
}

// errInsecure: tokens would cross the network in the clear.
var errInsecure = errors.New("not https (plain http is taken only on this machine's loopback addresses)")

// checkURL parses an absolute http(s) URL; plain http only to a loopback
// host, where nothing crosses a network.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch {
	case u.Host == "":
		return nil, fmt.Errorf("%q is not an absolute URL", raw)
	case u.Scheme == "https":
		return u, nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return u, nil
	case u.Scheme == "http":
		return nil, fmt.Errorf("%s: %w", raw, errInsecure)
	}
	return nil, fmt.Errorf("%q is not an http(s) URL", raw)
}

// canonical is a server URL as a resource identifier (RFC 8707): no
// fragment, no trailing slash.
func canonical(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	c.Scheme, c.Host = strings.ToLower(c.Scheme), strings.ToLower(c.Host)
	return strings.TrimSuffix(c.String(), "/")
}

// bindsTo reports whether resource names the server at u or a path above
// it on the same origin (RFC 9728 §3.3: metadata for another resource
// must not be used).
func bindsTo(resource string, u *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || !strings.EqualFold(r.Scheme, u.Scheme) || !strings.EqualFold(r.Host, u.Host) || r.RawQuery != u.RawQuery {
		return false
	}
	rp, up := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(u.EscapedPath(), "/")
	return rp == up || strings.HasPrefix(up, rp+"/")
}
