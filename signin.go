package mcpgram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// Signing in: a remote MCP server may ask for a sign-in (MCP
// authorization, OAuth 2.1); package oauth runs them and keeps what they
// give, sealed under the operator's OAUTH_KEY. What crosses the layers is
// here: what a sign-in is for, how it finished, and the errors callers
// branch on.

// A SignIn is one sign-in to a remote server to ask for: the server (its
// name, URL and settings), whose it is, and what waits for it.
type SignIn struct {
	Server string
	// UserID is whose account it signs in to; "" the operator's, which
	// serves every chat.
	UserID    string
	ServerURL string
	Config    OAuthConfig
	// Tag is the caller's, kept sealed with the sign-in and handed back
	// when it finishes (FinishedSignIn.Tag): what waits for it (a chat's
	// connect form).
	Tag string
}

// An OAuthConfig is what a server's settings entry says about signing in
// (its "oauth" object): a client the operator registered with the
// authorization server beforehand, the grant it signs in by, and the
// scopes to ask for when the server's challenge names none. It holds
// secrets: its String and LogValue show none of them.
type OAuthConfig struct {
	ClientID     string
	ClientSecret string
	// AuthMethod is the token endpoint's client authentication for the
	// pre-registered client: client_secret_basic, client_secret_post,
	// private_key_jwt or none; empty: chosen from what the authorization
	// server lists (private_key_jwt when PrivateKey is set).
	AuthMethod string
	Scopes     []string
	// Grant is how a token is got: GrantAuthorizationCode (empty too), a
	// person's sign-in in a browser; GrantClientCredentials, mcpgram's
	// own with the client's credentials, with nobody there; or
	// GrantEnterprise, with an ID token from the company's identity
	// provider (IdP), with nobody there either.
	Grant string
	// PrivateKey is the client's private key (PEM) for private_key_jwt
	// (RFC 7523 §2.2): with it, the client signs an assertion for each
	// token request instead of sending a secret.
	PrivateKey []byte
	// IdP is the identity provider of GrantEnterprise.
	IdP IdentityProvider
}

// An IdentityProvider is a company's identity provider (IdP), for
// enterprise-managed authorization (the MCP authorization extension of
// that name, SEP-990):
// it exchanges an ID token it issued for an ID-JAG, a JWT that the
// server's authorization server takes as a grant (RFC 7523).
type IdentityProvider struct {
	// Issuer is the IdP's issuer, whose metadata names its token
	// endpoint; or TokenEndpoint names it directly.
	Issuer, TokenEndpoint string
	// ClientID is mcpgram's client at the IdP, the audience of the ID
	// token; ClientSecret, when it has one, authenticates it.
	ClientID, ClientSecret string
	// IDToken is the ID token itself; or IDTokenFile names a file that
	// holds it, read again for each exchange, so that whatever renews
	// it may write it there.
	IDToken, IDTokenFile string
}

// Grants of an OAuthConfig.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantEnterprise        = "enterprise_managed"
)

// String shows the client and grant, never the secret, the key or the
// ID token.
func (c OAuthConfig) String() string {
	s := fmt.Sprintf("{clientId %q, secret %t, private key %t, method %q, grant %q, scopes %q",
		c.ClientID, c.ClientSecret != "", len(c.PrivateKey) > 0, c.AuthMethod, c.Grant, c.Scopes)
	if p := c.IdP; p != (IdentityProvider{}) {
		s += fmt.Sprintf(", idp {issuer %q, tokenEndpoint %q, clientId %q, secret %t, idToken %t, idTokenFile %q}",
			p.Issuer, p.TokenEndpoint, p.ClientID, p.ClientSecret != "", p.IDToken != "", p.IDTokenFile)
	}
	return s + "}"
}

// GoString is String for %#v.
func (c OAuthConfig) GoString() string { return c.String() }

// LogValue is String for log/slog.
func (c OAuthConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// A FinishedSignIn names the server and user a sign-in was for.
type FinishedSignIn struct {
	Server string
	UserID string
	// Tag is the SignIn's: what waited for it.
	Tag string
}

// An Authorizer signs in to the remote servers that ask for it: it wraps
// the HTTP transport of each, to carry its token: the operator's
// (userID "") for a server that acts as the operator's account, the
// calling user's for one that acts as each user's. BeginSignIn begins a
// user's sign-in whose browser comes back to redirectURI (see
// oauth.Manager.BeginSignIn). *oauth.Manager is one.
type Authorizer interface {
	Transport(server, userID, serverURL string, cfg OAuthConfig, base http.RoundTripper) http.RoundTripper
	BeginSignIn(ctx context.Context, req SignIn, headers map[string]string, redirectURI string) (string, error)
}

// CallbackPath is where, under PUBLIC_URL, the browser comes back from a
// user's sign-in (or an admin's from the chat).
const CallbackPath = "/oauth/callback"

// PasteBackRedirect is where the browser comes back to without a public
// URL: a loopback address that does not load, whose address the person
// copies from the browser and sends to the chat (RFC 8252 §7.3 allows
// any loopback redirect for a native client).
const PasteBackRedirect = "http://127.0.0.1" + CallbackPath

// MinOAuthKeyLength is the shortest OAUTH_KEY taken: a shorter secret is
// guessable offline by whoever reads the database.
const MinOAuthKeyLength = 32

// Errors of sign-ins that callers branch on.
var (
	// ErrNoKey: no OAUTH_KEY, so nothing can be sealed and no sign-in kept.
	ErrNoKey = errors.New("no OAUTH_KEY is set, so sign-ins cannot be kept: set OAUTH_KEY (in the environment, .env or OAUTH_KEY_FILE) to a random secret of at least 32 characters, such as the output of `openssl rand -base64 32`")
	// ErrSignInRequired: the server needs a sign-in that nobody is there
	// to do now.
	ErrSignInRequired = errors.New("sign-in required")
	// ErrKeyChanged: a sign-in is kept, but it does not open with this
	// key, so it cannot be used; requests fail with it (and with
	// ErrSignInRequired) where nobody is there to sign in again.
	ErrKeyChanged = errors.New("the kept sign-in does not open with this OAUTH_KEY (was the key changed?)")
	// ErrUnknownState: a callback whose state names no sign-in under way
	// (forged, used already, or expired). It changes nothing.
	ErrUnknownState = errors.New("this sign-in link is unknown, already used or expired: start the sign-in again")
	// ErrNotYours: a callback whose state names a sign-in of another user
	// or server than the one it was brought for (one user pasting
	// another's address). It changes nothing: the sign-in stays open for
	// its owner.
	ErrNotYours = errors.New("this sign-in address belongs to someone else's sign-in, so nothing was changed")
	// ErrNotSignedIn: there is no sign-in to disconnect (never made, or
	// disconnected already).
	ErrNotSignedIn = errors.New("not signed in")
)

// A RevokeError says a sign-in was deleted, its tokens gone from mcpgram,
// but the authorization server did not confirm that it revoked them: they
// may stay good there until they expire.
type RevokeError struct {
	Server string
	Err    error
}

func (e *RevokeError) Error() string {
	return fmt.Sprintf("disconnected from %s, but its authorization server did not revoke the tokens: %v", e.Server, e.Err)
}

func (e *RevokeError) Unwrap() error { return e.Err }
