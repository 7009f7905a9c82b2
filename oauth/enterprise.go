package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgram/mcpgram"
)

// Enterprise-managed authorization (the MCP authorization extension of
// that name, SEP-990, a profile of the IETF's Identity Assertion
// Authorization Grant): a server entry whose "oauth" says "grant":
// "enterprise_managed" is reached with an ID token that the company's
// identity provider (IdP) issued to mcpgram's client there, as an
// operator's machine holds one. For each token, mcpgram exchanges the ID
// token at the IdP's token endpoint (RFC 8693 token exchange) for an
// ID-JAG, a JWT whose audience is the server's authorization server and
// whose resource is the server, and presents the ID-JAG at that
// authorization server's token endpoint (the RFC 7523 JWT bearer grant),
// authenticated as the client the operator registered there. All else
// is the client credentials grant's (credentials.go): the same
// discovery, the token kept in memory only, another got a minute before
// it expires, on a 401, and for more scope on a 403.

// The grants and token types of the exchange (RFC 8693 §3, RFC 7523 §2.1,
// and the ID-JAG's own).
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	typeIDToken        = "urn:ietf:params:oauth:token-type:id_token"
	typeIDJAG          = "urn:ietf:params:oauth:token-type:id-jag"
	// maxIDToken bounds the ID token file read.
	maxIDToken = 64 << 10
)

// idJAG exchanges the ID token of idp at the IdP for an ID-JAG for the
// authorization server and resource of d, with scopes. mcpgram's client
// at the IdP authenticates with its secret in the form, as the
// specification's example does, or, without one, only names itself.
func (m *Manager) idJAG(ctx context.Context, idp mcpgram.IdentityProvider, d discovery, scopes []string) (string, error) {
	idToken, err := readIDToken(idp, m.now())
	if err != nil {
		return "", err
	}
	endpoint, hc, err := m.idpTokenEndpoint(ctx, idp)
	if err != nil {
		return "", err
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {typeIDJAG},
		"audience":             {d.AS.Issuer},
		"resource":             {d.Resource},
		"subject_token":        {idToken},
		"subject_token_type":   {typeIDToken},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	c := Client{ID: idp.ClientID, Secret: idp.ClientSecret, AuthMethod: authPost}
	if c.Secret == "" {
		c.AuthMethod = authNone
	}
	resp, err := postForm(ctx, hc, endpoint, c, form)
	if err != nil {
		return "", fmt.Errorf("identity provider's token endpoint: %w", err)
	}
	defer resp.Body.Close()
	return readIDJAG(resp)
}

// readIDJAG reads the IdP's answer to a token exchange: the ID-JAG, or
// why there is none.
func readIDJAG(resp *http.Response) (string, error) {
	var answer struct {
		Error
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	decodeErr := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(&answer)
	switch {
	case answer.Code != "":
		return "", fmt.Errorf("the identity provider refused to exchange the ID token: %w", &answer.Error)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", fmt.Errorf("the identity provider's token endpoint answered %s", resp.Status)
	case decodeErr != nil:
		return "", fmt.Errorf("the identity provider's token endpoint: %w", decodeErr)
	case answer.AccessToken == "":
		return "", errors.New("the identity provider's token exchange gave no access_token (the ID-JAG)")
	case answer.IssuedTokenType != typeIDJAG:
		return "", fmt.Errorf("the identity provider's token exchange issued a %q, not an ID-JAG (%s)", oneLine(answer.IssuedTokenType), typeIDJAG)
	}
	return answer.AccessToken, nil
}

// idpTokenEndpoint returns the token endpoint of idp, as the settings
// name it or as its issuer's metadata does, and the HTTP client that
// reaches it: within the reach of the URL the operator gave (see
// reach.go), following no redirect of the exchange.
func (m *Manager) idpTokenEndpoint(ctx context.Context, idp mcpgram.IdentityProvider) (string, *http.Client, error) {
	given := idp.TokenEndpoint
	if given == "" {
		given = idp.Issuer
	}
	if _, err := checkURL(given); err != nil {
		return "", nil, fmt.Errorf("the identity provider's URL: %w", err)
	}
	r, err := m.reachOf(ctx, given)
	if err != nil {
		return "", nil, fmt.Errorf("the identity provider's URL: %w", err)
	}
	hc := m.httpFor(r)
	if idp.TokenEndpoint != "" {
		return idp.TokenEndpoint, hc, nil
	}
	md, err := serverMetadata(ctx, hc, idp.Issuer)
	if err != nil {
		return "", nil, fmt.Errorf("the identity provider: %w", err)
	}
	if _, err := m.checkField(ctx, r, "token_endpoint", md.TokenEndpoint, false); err != nil {
		return "", nil, fmt.Errorf("the identity provider's metadata: %w", err)
	}
	return md.TokenEndpoint, hc, nil
}

// readIDToken returns the ID token of idp: its own, or its file's, read
// now (whatever renews it may have written a new one). One whose exp has
// passed is not sent; the error names the file, never the token.
func readIDToken(idp mcpgram.IdentityProvider, now time.Time) (string, error) {
	tok, what := idp.IDToken, "the ID token"
	if idp.IDTokenFile != "" {
		what = "the ID token in " + idp.IDTokenFile
		f, err := os.Open(idp.IDTokenFile)
		if err != nil {
			return "", fmt.Errorf("read the ID token: %w", err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxIDToken+1))
		if err != nil {
			return "", fmt.Errorf("read the ID token: %w", err)
		}
		if len(b) > maxIDToken {
			return "", fmt.Errorf("%s is over %d KiB: not an ID token", what, maxIDToken>>10)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" {
		return "", fmt.Errorf("%s is empty", what)
	}
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &claims); err == nil && claims.ExpiresAt != nil && !now.Before(claims.ExpiresAt.Time) {
		return "", fmt.Errorf("%s expired at %s: get a new one", what, claims.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return tok, nil
}
