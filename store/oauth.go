package store

import (
	"context"
	"time"
)

// An OAuthGrant is what signing in to a protected MCP server gave (MCP
// authorization, OAuth 2.1): its tokens and the client they were issued
// to, sealed by the caller (encrypted; the store never sees them in the
// clear). UserID is empty for the operator's sign-in, which every chat
// shares; a user's own sign-in names the user.
//
// Version counts the grant's writes. A refresh token may be spent once, so
// of several processes that find the access token expired only one
// refreshes it: the one whose [OAuth.ClaimOAuthRefresh] succeeded; the
// others wait for the version to move on and read what it wrote.
type OAuthGrant struct {
	Server    string
	UserID    string
	Sealed    []byte
	Version   int64
	UpdatedAt time.Time
}

// An OAuthGrantInfo names a grant without its secrets: the server it
// signs in to, whose it is, when that sign-in was made (SignedInAt: the
// last PutOAuthGrant) and when it was last written (UpdatedAt: that, or
// a refresh since).
type OAuthGrantInfo struct {
	Server     string
	UserID     string
	SignedInAt time.Time
	UpdatedAt  time.Time
}

// An OAuthFlow is a sign-in under way: it waits for the authorization
// server to send the browser back with its state. State is the caller's
// digest of that state parameter, which names the flow; a flow is taken
// once, and not after ExpiresAt.
type OAuthFlow struct {
	State     string
	Server    string
	UserID    string
	Sealed    []byte
	ExpiresAt time.Time
}

// OAuth keeps the sign-ins to protected MCP servers: grants, the clients
// registered with authorization servers, and the flows under way, shared
// by every process of the store so that a sign-in started on one finishes
// on another and a refresh by one is seen by all.
type OAuth interface {
	// GetOAuthGrant returns the grant of server for userID, or ErrNotFound.
	GetOAuthGrant(ctx context.Context, server, userID string) (OAuthGrant, error)
	// PutOAuthGrant stores sealed as the grant of server for userID,
	// replacing any (a new sign-in), ends any claim to refresh it, and
	// returns its new version.
	PutOAuthGrant(ctx context.Context, server, userID string, sealed []byte) (int64, error)
	// ClaimOAuthRefresh claims the refresh of the grant at version until
	// until. Of all callers, in all processes, one gets true until its
	// claim ends, by UpdateOAuthGrant or by until passing; the others get
	// false, as do callers whose version is no longer the grant's.
	ClaimOAuthRefresh(ctx context.Context, server, userID string, version int64, until time.Time) (bool, error)
	// UpdateOAuthGrant replaces the grant at version by sealed, ends the
	// claim to refresh it, and returns its new version: ErrChanged if the
	// grant is no longer at version, ErrNotFound if it is gone.
	UpdateOAuthGrant(ctx context.Context, server, userID string, version int64, sealed []byte) (int64, error)
	// DeleteOAuthGrant forgets the grant, if any.
	DeleteOAuthGrant(ctx context.Context, server, userID string) error
	// TakeOAuthGrant forgets the grant and returns what it was, in one
	// step: of several takes, from any processes, one gets it and the
	// others ErrNotFound, as does a take of none.
	TakeOAuthGrant(ctx context.Context, server, userID string) (OAuthGrant, error)
	// ListOAuthGrants returns, by server name, the grants userID has (''
	// lists the operator's), without what they seal: none is an empty
	// list, not an error.
	ListOAuthGrants(ctx context.Context, userID string) ([]OAuthGrantInfo, error)

	// GetOAuthClient returns the client registered for server with the
	// authorization server issuer for redirectURI, or ErrNotFound.
	GetOAuthClient(ctx context.Context, server, issuer, redirectURI string) ([]byte, error)
	// PutOAuthClient stores that client, replacing any.
	PutOAuthClient(ctx context.Context, server, issuer, redirectURI string, sealed []byte) error

	// PutOAuthFlow stores f, and forgets the flows that have expired.
	PutOAuthFlow(ctx context.Context, f OAuthFlow) error
	// GetOAuthFlow returns the flow named state, leaving it, or
	// ErrNotFound if there is none or it expired: whose it is may be
	// checked before it is taken.
	GetOAuthFlow(ctx context.Context, state string) (OAuthFlow, error)
	// TakeOAuthFlow returns the flow named state and forgets it: a second
	// take, or a take after it expired, gets ErrNotFound.
	TakeOAuthFlow(ctx context.Context, state string) (OAuthFlow, error)
}
