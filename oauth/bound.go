package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// BeginSignIn begins a sign-in of req.UserID to req's server now, whose
// browser is to come back to redirectURI: it asks the server first (a
// ping without a token, with the entry's headers) for the challenge that
// says where to sign in and for what, then Begins. It returns the URL to
// send the person to.
func (m *Manager) BeginSignIn(ctx context.Context, req mcpgram.SignIn, headers map[string]string, redirectURI string) (string, error) {
	if err := m.canSeal(); err != nil {
		return "", err
	}
	ch, _, err := m.probe(ctx, req.ServerURL, headers)
	if err != nil {
		return "", fmt.Errorf("ask %s: %w", req.Server, err)
	}
	authURL, _, err := m.Begin(ctx, Request{SignIn: req, Challenge: ch}, redirectURI)
	return authURL, err
}

// FinishAs is Finish for a callback brought by userID for server (a
// pasted address): a state whose flow is another's gives ErrNotYours
// and leaves that flow as it was; one that names no flow under way,
// ErrUnknownState. An empty server matches the flow of any server of
// userID.
func (m *Manager) FinishAs(ctx context.Context, query url.Values, server, userID string) (mcpgram.FinishedSignIn, error) {
	f, err := m.Pending(ctx, query)
	switch {
	case err != nil:
		return mcpgram.FinishedSignIn{}, err
	case f.UserID != userID || (server != "" && f.Server != server):
		m.log.Warn("a sign-in callback brought by someone else than its owner; left as it was", "server", f.Server, "by", userID)
		return mcpgram.FinishedSignIn{}, mcpgram.ErrNotYours
	}
	return m.Finish(ctx, query)
}

// Pending names the server, user and tag of the sign-in under way that a
// callback's query (its state) belongs to, leaving it under way: whose it
// is, and what waits for it, may be shown or checked before it is
// finished. A state that names no flow under way gives ErrUnknownState.
func (m *Manager) Pending(ctx context.Context, query url.Values) (mcpgram.FinishedSignIn, error) {
	if _, err := m.sealing(false); err != nil {
		return mcpgram.FinishedSignIn{}, err
	}
	state := query.Get("state")
	if state == "" {
		return mcpgram.FinishedSignIn{}, mcpgram.ErrUnknownState
	}
	key := digest(state)
	sf, err := m.store.GetOAuthFlow(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return mcpgram.FinishedSignIn{}, mcpgram.ErrUnknownState
	case err != nil:
		return mcpgram.FinishedSignIn{}, err
	}
	var f flow
	plain, err := m.sealer.Open(sf.Sealed, "flow|"+key)
	if err == nil {
		err = json.Unmarshal(plain, &f)
	}
	if err != nil {
		return mcpgram.FinishedSignIn{}, fmt.Errorf("open the flow of %s: %w", sf.Server, err)
	}
	return mcpgram.FinishedSignIn{Server: sf.Server, UserID: sf.UserID, Tag: f.Tag}, nil
}
