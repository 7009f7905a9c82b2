package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
)

// A terminalConnector connects a terminal user's own account to a
// per-user server mid-call (mcpgram.Connector), as `mcpgram mcp login` signs
// the operator in: it prints the authorization URL (and opens it with
// $BROWSER), and the browser comes back to a port of 127.0.0.1. The
// sign-in is the calling user's (mcpgram.Caller.UserID: --user), finished
// only as theirs.
type terminalConnector struct {
	auth *oauth.Manager
	out  io.Writer
	open func(ctx context.Context, authURL string) error
}

// terminalConnect returns the Connector of a terminal command, or nil
// (nobody can be asked, and a per-user call fails saying so) when nobody
// is there: interactive is false (stdin is no terminal and $BROWSER
// names no program).
func terminalConnect(interactive bool, getenv func(string) (string, bool), out io.Writer) func(*oauth.Manager) mcpgram.Connector {
	if !interactive {
		return nil
	}
	return func(m *oauth.Manager) mcpgram.Connector {
		return &terminalConnector{auth: m, out: out, open: openBrowser(getenv, out)}
	}
}

// Connect implements mcpgram.Connector: ElicitAccept once signed in,
// ElicitCancel when ctx ends first (Ctrl-C), or the sign-in's error.
func (t *terminalConnector) Connect(ctx context.Context, c mcpgram.Connection) (mcpgram.ElicitAction, error) {
	fmt.Fprintf(t.out, "mcpgram: %s acts as each user's own account: sign in to it as user %q.\n", c.Server, c.Caller.UserID)
	begin := func(ctx context.Context, redirectURI string) (string, string, error) {
		authURL, err := c.Begin(ctx, redirectURI, "")
		if err != nil {
			return "", "", err
		}
		u, err := url.Parse(authURL)
		if err != nil {
			return "", "", fmt.Errorf("the sign-in's address: %w", err)
		}
		state := u.Query().Get("state")
		if state == "" {
			return "", "", errors.New("the sign-in's address carries no state")
		}
		return authURL, state, nil
	}
	finish := func(ctx context.Context, q url.Values) error {
		_, err := t.auth.FinishAs(ctx, q, c.Server, c.Caller.UserID)
		return err
	}
	err := oauth.ServeLoopback(ctx, c.Server, begin, finish, t.open)
	switch {
	case err == nil:
		fmt.Fprintf(t.out, "mcpgram: connected to %s.\n", c.Server)
		return mcpgram.ElicitAccept, nil
	case ctx.Err() != nil:
		return mcpgram.ElicitCancel, nil
	}
	return mcpgram.ElicitCancel, err
}

// operatorOnly is in for sign-in, but only the operator's (user ""): a
// user's own sign-in is left to the hub's Connector, which waits for it
// outside the server's timeout.
func operatorOnly(in oauth.Interactive) oauth.Interactive {
	return func(ctx context.Context, m *oauth.Manager, req oauth.Request) error {
		if req.UserID != "" {
			return fmt.Errorf("%w: %s acts as each user's own account", mcpgram.ErrSignInRequired, req.Server)
		}
		return in(ctx, m, req)
	}
}
