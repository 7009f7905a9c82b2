package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
// server.
func discover(ctx context.Context, hc *http.Client, serverURL string, ch Challenge) (discovery, error) {
	server, err := checkURL(serverURL)
	if err != nil {
		return discovery{}, fmt.Errorf("server URL: %w", err)
	}
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
		if d.AS, err = authServerMetadata(ctx, hc, prm.AuthorizationServers[0]); err != nil {
			return discovery{}, err
		}
		return d, nil
	}
	as, err := legacyAuthServer(ctx, hc, server)
	if err != nil {
		return discovery{}, err
	}
	return discovery{Resource: canonical(server), AS: as}, nil
}

// resourceMetadataURLs are the places of a resource's metadata, in order.
func resourceMetadataURLs(server *url.URL, fromChallenge string) []string {
	var out []string
	if fromChallenge != "" {
		if _, err := checkURL(fromChallenge); err == nil {
			out = append(out, fromChallenge)
		}
	}
	root := server.Scheme + "://" + server.Host + "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		out = append(out, root+p)
	}
	return append(out, root)
}

// authServerMetadata fetches the metadata of the authorization server
// issuer and checks that it names that issuer (RFC 8414 §3.3).
func authServerMetadata(ctx context.Context, hc *http.Client, issuer string) (authServer, error) {
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
		return as, as.check()
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

// check refuses metadata with endpoints that are not http(s) URLs, or
// that do not offer PKCE with S256, as the specification requires.
func (as authServer) check() error {
	for name, u := range map[string]string{"authorization_endpoint": as.AuthorizationEndpoint, "token_endpoint": as.TokenEndpoint} {
		if _, err := checkURL(u); err != nil {
			return fmt.Errorf("authorization server %s: %s: %w", as.Issuer, name, err)
		}
	}
	if as.RegistrationEndpoint != "" {
		if _, err := checkURL(as.RegistrationEndpoint); err != nil {
			return fmt.Errorf("authorization server %s: registration_endpoint: %w", as.Issuer, err)
		}
	}
	if !as.fromDefaults && !slices.Contains(as.CodeChallengeMethods, "S256") {
		return fmt.Errorf("authorization server %s does not offer PKCE with S256 (code_challenge_methods_supported), which MCP requires: refusing to sign in", as.Issuer)
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

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
