package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
)

// An Error is an OAuth error answer (RFC 6749 §5.2).
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func (e *Error) Error() string {
	if e.Description != "" {
		return fmt.Sprintf("%s: %s", e.Code, oneLine(e.Description))
	}
	return e.Code
}

// oneLine keeps what a remote server wrote to one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}

// tokenRequest posts form to the token endpoint as client c, and returns
// the token it answers. asked are the scopes asked for, the granted ones
// when the answer names none.
func tokenRequest(ctx context.Context, hc *http.Client, endpoint string, c Client, form url.Values, asked []string, now time.Time) (Token, error) {
	resp, err := postForm(ctx, hc, endpoint, c, form)
	if err != nil {
		return Token{}, fmt.Errorf("token endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return Token{}, fmt.Errorf("token endpoint: %w", err)
	}
	var answer struct {
		Error
		AccessToken  string      `json:"access_token"`
		TokenType    string      `json:"token_type"`
		RefreshToken string      `json:"refresh_token"`
		ExpiresIn    json.Number `json:"expires_in"`
		Scope        string      `json:"scope"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	decodeErr := dec.Decode(&answer)
	switch {
	case answer.Code != "":
		return Token{}, fmt.Errorf("token endpoint: %w", &answer.Error)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Token{}, fmt.Errorf("token endpoint answered %s", resp.Status)
	case decodeErr != nil:
		return Token{}, fmt.Errorf("token endpoint: %w", decodeErr)
	case answer.AccessToken == "":
		return Token{}, fmt.Errorf("token endpoint gave no access_token")
	case answer.TokenType != "" && !strings.EqualFold(answer.TokenType, "bearer"):
		return Token{}, fmt.Errorf("token endpoint gave a %q token; MCP takes bearer tokens", oneLine(answer.TokenType))
	}
	t := Token{AccessToken: answer.AccessToken, TokenType: "Bearer", RefreshToken: answer.RefreshToken, Scopes: fields(answer.Scope)}
	if t.Scopes == nil {
		t.Scopes = slices.Clone(asked)
	}
	if secs, err := answer.ExpiresIn.Float64(); err == nil && secs > 0 && secs < 10*365*24*3600 {
		t.Expiry = now.Add(time.Duration(secs * float64(time.Second)))
	}
	return t, nil
}

// register registers mcpgram with the authorization server (RFC 7591), as
// a public client where the server takes one, for redirectURI.
func register(ctx context.Context, hc *http.Client, as authServer, redirectURI string, scopes []string) (Client, error) {
	method := authNone
	if m := as.AuthMethodsSupported; len(m) > 0 && !slices.Contains(m, authNone) {
		method = authBasic
		if !slices.Contains(m, authBasic) && slices.Contains(m, authPost) {
			method = authPost
		}
	}
	body := map[string]any{
		"client_name":                "mcpgram",
		"redirect_uris":              []string{redirectURI},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
	}
	if len(scopes) > 0 {
		body["scope"] = strings.Join(scopes, " ")
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(data))
	if err != nil {
		return Client{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return Client{}, fmt.Errorf("register with %s: %w", as.Issuer, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Error
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	decodeErr := json.NewDecoder(io.LimitReader(resp.Body, maxDocument)).Decode(&answer)
	switch {
	case answer.Code != "":
		return Client{}, fmt.Errorf("register with %s: %w", as.Issuer, &answer.Error)
	case resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK:
		return Client{}, fmt.Errorf("register with %s: answered %s", as.Issuer, resp.Status)
	case decodeErr != nil || answer.ClientID == "":
		return Client{}, fmt.Errorf("register with %s: no client_id in the answer", as.Issuer)
	}
	c := Client{ID: answer.ClientID, Secret: answer.ClientSecret, AuthMethod: method}
	// The server says which method it registered (RFC 7591 §3.2.1).
	if m := answer.AuthMethod; m == authBasic || m == authPost || m == authNone {
		c.AuthMethod = m
	}
	if c.Secret == "" {
		c.AuthMethod = authNone
	}
	return c, nil
}

// preRegistered is the operator's client, authenticating as the entry
// says or else as the authorization server prefers.
func preRegistered(cfg mcpgram.OAuthConfig, as authServer) Client {
	c := Client{ID: cfg.ClientID, Secret: cfg.ClientSecret, AuthMethod: cfg.AuthMethod}
	if c.AuthMethod != "" {
		return c
	}
	m := as.AuthMethodsSupported
	switch {
	case len(cfg.PrivateKey) > 0:
		c.AuthMethod = authJWT
	case c.Secret == "":
		c.AuthMethod = authNone
	case len(m) == 0 || slices.Contains(m, authBasic):
		// RFC 8414 §2: client_secret_basic is the default.
		c.AuthMethod = authBasic
	case slices.Contains(m, authPost):
		c.AuthMethod = authPost
	default:
		c.AuthMethod = authBasic
	}
	return c
}
