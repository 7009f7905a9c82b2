package oauthfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// AccountParam is the query parameter of the authorization URL that
// stands for the account the person signs in with on the authorization
// server's page: the tokens of that sign-in are that account's, and
// whoami says its name. Without it the account is Server.Subject.
const AccountParam = "test_account"

// As is the authorization URL authURL with the person signing in as
// account.
func As(authURL, account string) string {
	u, err := url.Parse(authURL)
	if err != nil {
		return authURL
	}
	q := u.Query()
	q.Set(AccountParam, account)
	u.RawQuery = q.Encode()
	return u.String()
}

// BrowseAs is Browse signing in as account.
func BrowseAs(ctx context.Context, authURL, account string) error {
	return Browse(ctx, As(authURL, account))
}

// Authorize is a browser that signs in as account at authURL and stops
// at the address the authorization server sends it back to, without
// loading it (a loopback address where nothing listens, whose address
// the person then copies), and returns that address.
func Authorize(ctx context.Context, authURL, account string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, As(authURL, account), nil)
	if err != nil {
		return "", err
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return "", fmt.Errorf("the sign-in's page answered %s", resp.Status)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", errors.New("the sign-in's page sent the browser nowhere")
	}
	return loc, nil
}
