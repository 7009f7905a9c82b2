// Package oauth signs mcpgram in to MCP servers that ask for it: MCP
// authorization, which is OAuth 2.1 with PKCE, discovered from the server.
//
// A remote server that answers 401 with a Bearer challenge is signed in to
// by discovery: its protected resource metadata (RFC 9728, from the
// challenge or the well-known paths), its authorization server's metadata
// (RFC 8414, or OpenID Connect discovery), or, for a server of the
// 2025-03-26 revision that publishes no resource metadata, the
// authorization server at the server's own origin and, failing its
// metadata, the default endpoints /authorize, /token and /register there.
// mcpgram identifies itself with the client id and secret the operator
// pre-registered (the server entry's "oauth" object), else with its Client
// ID Metadata Document where the authorization server takes one and
// mcpgram has a public URL, else by dynamic client registration. It asks
// for the scopes of the challenge, else those of the entry, else those the
// resource lists, and offline_access (a refresh token) where the
// authorization server lists it; it sends the resource parameter (RFC
// 8707) and checks the issuer (RFC 8414, RFC 9207). What a server's metadata names is
// reached only within the server's own reach: https (plain http only
// when the server itself is on loopback), and loopback, private or
// link-local addresses only when the server's own address is one too,
// checked as the metadata is read and again as each connection is made;
// token, registration and revocation requests follow no redirects.
//
// What a sign-in gives, a grant (tokens, and the client they were issued
// to), is kept in the store sealed with AES-256-GCM under the operator's
// key ([Sealer]), keyed by server and user: the operator's sign-in has no
// user and serves every chat. A [Manager] hands the hub an HTTP transport
// per server that sends the access token, refreshes it before it expires
// (one process of all that share the store spends a refresh token: see
// [store.OAuth.ClaimOAuthRefresh]), and on a 401, or a 403 asking for more
// scope (step-up), signs in again where someone is there to do it (the
// terminal: [Manager.SetInteractive]), or else fails the request saying
// who can sign in. Every request reads the grant from the store (it
// unseals it again only when it changed), so a refresh or a Disconnect
// by one process is seen by all at their next request.
// [Manager.Disconnect] deletes a grant and asks the authorization server
// to revoke its tokens (RFC 7009).
//
// A server whose entry says "grant": "client_credentials" is reached by
// the client credentials grant instead (credentials.go): mcpgram gets its
// token itself, with the client id and the secret or private key
// (private_key_jwt, RFC 7523) the operator registered, whenever it needs
// one; nobody signs in, and the token is kept in memory only. One whose
// entry says "grant": "enterprise_managed" is reached the same way, but
// with an ID token of the company's identity provider, exchanged there
// for an ID-JAG that the authorization server takes as a JWT bearer
// grant (enterprise.go, SEP-990).
//
// This package is ours rather than mcp-go's client OAuth handler
// (client/transport/oauth.go), which we read and borrow PKCE helpers
// from: its discovery does not try the resource metadata at the origin's
// root, cannot see client_id_metadata_document_supported or the
// resource's scopes_supported, and its token store has no way to keep two
// processes from spending one refresh token.
package oauth

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Token endpoint client authentication methods (RFC 7591 §2).
const (
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
	authNone  = "none"
)

// offlineAccess is the scope that asks for a refresh token.
const offlineAccess = "offline_access"

// A Token is an access token with what refreshes it.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scopes are those granted: the response's scope, else those asked for
	// (RFC 6749 §5.1).
	Scopes []string `json:"scopes,omitempty"`
}

// A Client is how mcpgram is known to an authorization server. Its
// String and LogValue show no secret.
type Client struct {
	ID         string `json:"client_id"`
	Secret     string `json:"client_secret,omitempty"`
	AuthMethod string `json:"auth_method"`
}

func (c Client) String() string {
	return fmt.Sprintf("{client %q, %s, secret %t}", c.ID, c.AuthMethod, c.Secret != "")
}

// GoString is String for %#v.
func (c Client) GoString() string { return c.String() }

// LogValue is String for log/slog.
func (c Client) LogValue() slog.Value { return slog.StringValue(c.String()) }

// A grant is what the store keeps, sealed, for one sign-in: the token and
// all a refresh needs, with the server URL it was issued for (a grant for
// another URL does not apply once the settings change).
type grant struct {
	Token         Token  `json:"token"`
	Client        Client `json:"client"`
	TokenEndpoint string `json:"token_endpoint"`
	Issuer        string `json:"issuer,omitempty"`
	Resource      string `json:"resource,omitempty"`
	ServerURL     string `json:"server_url"`
	// Revocation is the authorization server's revocation endpoint (RFC
	// 7009), "" when it lists none; nil in grants made before mcpgram
	// kept it, whose Disconnect reads the issuer's metadata for it.
	Revocation *string `json:"revocation_endpoint,omitempty"`
}

// expiresWithin reports whether the access token ends within d of now.
func (t Token) expiresWithin(now time.Time, d time.Duration) bool {
	return !t.Expiry.IsZero() && !now.Add(d).Before(t.Expiry)
}

// covers reports whether granted holds every scope of want.
func covers(granted, want []string) bool {
	for _, s := range want {
		if !slices.Contains(granted, s) {
			return false
		}
	}
	return true
}

// union is a's scopes then those of b not in a.
// scopesFor is what req asks of the authorization server d names: the
// scopes the server's challenge names, else those the entry's settings
// do, else those the resource's metadata lists; and those req adds.
func scopesFor(req Request, d discovery) []string {
	scopes := req.Challenge.Scope
	switch {
	case len(scopes) > 0:
	case len(req.Config.Scopes) > 0:
		scopes = req.Config.Scopes
	default:
		scopes = d.ScopesSupported
	}
	return union(scopes, req.Scopes)
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// fields splits a space-separated scope string.
func fields(s string) []string { return strings.Fields(s) }
