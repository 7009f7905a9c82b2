package mcpgram

import (
	"context"
	"errors"
	"net/url"
)

// A Connection asks a user to connect their own account to a per-user
// server mid-call.
type Connection struct {
	// Caller is whose account it is, and whose call waits.
	Caller Caller
	Server string
	// URL is the server's address, whose host the user is shown.
	URL string
	// BeginFunc begins the sign-in (see Begin); the engine that asks
	// sets it.
	BeginFunc func(ctx context.Context, redirectURI, tag string) (string, error)
}

// Host is the full domain of the server's address.
func (c Connection) Host() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Begin begins the sign-in, whose browser comes back to redirectURI, and
// returns the URL to send the user to. tag is handed back when the
// sign-in finishes (FinishedSignIn.Tag), naming what waits for it.
func (c Connection) Begin(ctx context.Context, redirectURI, tag string) (string, error) {
	if c.BeginFunc == nil {
		return "", errors.New("no sign-ins: the hub has no Authorizer")
	}
	return c.BeginFunc(ctx, redirectURI, tag)
}

// A Connector asks users to connect their accounts. Connect returns once
// the user connected (ElicitAccept: the sign-in is kept), refused
// (ElicitDecline), or did not in time or ctx ended (ElicitCancel).
type Connector interface {
	Connect(ctx context.Context, c Connection) (ElicitAction, error)
}
