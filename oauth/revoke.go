package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// defaultRevokeTimeout bounds the revocation of one sign-in's tokens,
// whatever the HTTP client's own timeout: the person who pressed
// Disconnect waits for it.
const defaultRevokeTimeout = 15 * time.Second

// Disconnect ends the sign-in of server for userID ("" the operator's):
// it deletes the grant, which every process sharing the store sees at its
// next request to the server, and then asks the authorization server to
// revoke its refresh and access tokens (RFC 7009) as the client they were
// issued to. revoked says the authorization server confirmed it; false
// with a nil error means it offers no revocation. A failed revocation is
// logged and returned as a *RevokeError, the grant deleted all the same;
// no sign-in gives ErrNotSignedIn.
//
// A grant made before mcpgram kept the revocation endpoint in it is
// revoked at the endpoint its issuer's metadata lists now.
func (m *Manager) Disconnect(ctx context.Context, server, userID string) (revoked bool, err error) {
	k := grantKey{server, userID}
	m.forget(k)
	row, err := m.store.TakeOAuthGrant(ctx, server, userID)
	if errors.Is(err, store.ErrNotFound) {
		return false, mcpgram.ErrNotSignedIn
	}
	if err != nil {
		return false, err
	}
	m.forget(k) // a request that read the grant meanwhile remembered it
	m.log.Info("disconnected", "server", server, "user", userID)
	var g grant
	if sealer, serr := m.sealing(false); serr != nil {
		err = fmt.Errorf("the kept sign-in cannot be opened: %w", serr)
	} else if plain, oerr := sealer.Open(row.Sealed, k.where()); oerr != nil {
		err = fmt.Errorf("the kept sign-in does not open: %w", oerr)
	} else if uerr := json.Unmarshal(plain, &g); uerr != nil {
		err = fmt.Errorf("the kept sign-in is unreadable: %w", uerr)
	}
	if err == nil {
		revoked, err = m.revoke(ctx, k, g)
	}
	if err != nil {
		m.log.Warn("token revocation failed; the sign-in is deleted here all the same", "server", server, "user", userID, "err", err)
		return false, &mcpgram.RevokeError{Server: server, Err: err}
	}
	return revoked, nil
}

// revoke asks g's authorization server to revoke its refresh token, then
// its access token; revoked is false, with no error, when the server
// offers no revocation.
func (m *Manager) revoke(ctx context.Context, k grantKey, g grant) (revoked bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, m.revokeIn)
	defer cancel()
	r, err := m.reachOf(ctx, g.ServerURL)
	if err != nil {
		return false, err
	}
	hc := m.httpFor(r)
	var endpoint string
	if g.Revocation != nil {
		endpoint = *g.Revocation
	} else {
		if _, err := m.checkField(ctx, r, "issuer", g.Issuer, false); err != nil {
			return false, fmt.Errorf("find the revocation endpoint: %w", err)
		}
		as, err := authServerMetadata(ctx, hc, g.Issuer)
		if err != nil {
			return false, fmt.Errorf("find the revocation endpoint: %w", err)
		}
		endpoint = as.RevocationEndpoint
	}
	if endpoint == "" {
		m.log.Info("the authorization server offers no token revocation", "server", k.server, "user", k.user)
		return false, nil
	}
	if _, err := m.checkField(ctx, r, "revocation_endpoint", endpoint, false); err != nil {
		return false, err
	}
	var errs []error
	if t := g.Token.RefreshToken; t != "" {
		errs = append(errs, revokeToken(ctx, hc, endpoint, g.Client, t, "refresh_token"))
	}
	errs = append(errs, revokeToken(ctx, hc, endpoint, g.Client, g.Token.AccessToken, "access_token"))
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	m.log.Info("tokens revoked", "server", k.server, "user", k.user)
	return true, nil
}

// revokeToken asks endpoint to revoke token, of the type hint, as the
// client c (RFC 7009 §2.1). A 200 is success, whatever its body (§2.2).
func revokeToken(ctx context.Context, hc *http.Client, endpoint string, c Client, token, hint string) error {
	resp, err := postForm(ctx, hc, endpoint, c, url.Values{"token": {token}, "token_type_hint": {hint}})
	if err != nil {
		return fmt.Errorf("revoke the %s: %w", strings.ReplaceAll(hint, "_", " "), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var answer Error
	if json.Unmarshal(body, &answer) == nil && answer.Code != "" {
		answer.Code = oneLine(answer.Code)
		return fmt.Errorf("revoke the %s: %s answered %s: %w", strings.ReplaceAll(hint, "_", " "), endpoint, resp.Status, &answer)
	}
	return fmt.Errorf("revoke the %s: %s answered %s", strings.ReplaceAll(hint, "_", " "), endpoint, resp.Status)
}

// postForm posts form to an authorization server's endpoint as the
// client c, authenticated as it was registered: client_secret_basic,
// client_secret_post, or none (its client_id alone).
func postForm(ctx context.Context, hc *http.Client, endpoint string, c Client, form url.Values) (*http.Response, error) {
	switch c.AuthMethod {
	case authBasic:
	case authJWT:
		// The caller put the assertion in form, which names the client
		// (RFC 7523 §3: its sub).
	case authPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	default:
		form.Set("client_id", c.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == authBasic {
		// RFC 6749 §2.3.1: both form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	return hc.Do(req)
}
