package hub

import (
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// This file reads a remote server entry's "oauth" object: how mcpgram
// signs in to the server, or gets its token itself.

// Whose account a remote server acts as (its entry's "oauth.account").
const (
	// AccountOperator: the operator signs in once, for every chat.
	AccountOperator = "operator"
	// AccountUser: each user connects their own account, and each user's
	// calls carry that user's token alone.
	AccountUser = "user"
)

// readAccount reads an entry's "oauth.account".
func readAccount(a string) (string, error) {
	switch a {
	case "", AccountOperator:
		return AccountOperator, nil
	case AccountUser:
		return AccountUser, nil
	}
	return "", fmt.Errorf("oauth.account %s: want %q (one sign-in for every chat, the default) or %q (each user connects their own account)", quoteShort(a), AccountOperator, AccountUser)
}

// oauthEntry is the JSON shape of an entry's "oauth" object: a client
// the operator registered with the server's authorization server, and the
// scopes to ask for when the server names none.
type oauthEntry struct {
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret"`
	AuthMethod   string   `json:"tokenEndpointAuthMethod"`
	Scopes       []string `json:"scopes"`
	Account      string   `json:"account"`
	// Grant is "authorization_code" (a person signs in, the default),
	// "client_credentials" (mcpgram gets its token itself, with the
	// client's secret or private key) or "enterprise_managed" (it gets
	// it with an ID token of the identity provider IdP names, and the
	// client's secret or private key).
	Grant string `json:"grant"`
	// PrivateKey is the client's PEM private key for private_key_jwt,
	// usually ${env:NAME}; PrivateKeyFile, a file that holds it,
	// relative to the settings file's folder.
	PrivateKey     string    `json:"privateKey"`
	PrivateKeyFile string    `json:"privateKeyFile"`
	IdP            *idpEntry `json:"idp"`
}

// idpEntry is the JSON shape of "oauth.idp": the identity provider of
// "grant": "enterprise_managed", mcpgram's client there, and the ID
// token it exchanges (itself, usually ${env:NAME}, or a file that holds
// it, relative to the settings file's folder).
type idpEntry struct {
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"tokenEndpoint"`
	ClientID      string `json:"clientId"`
	ClientSecret  string `json:"clientSecret"`
	IDToken       string `json:"idToken"`
	IDTokenFile   string `json:"idTokenFile"`
}

// readOAuth reads the entry's "oauth" object; a private key or ID token
// file is relative to dir, the settings file's folder, and kept from
// every sandboxed server (secretFiles).
func (c *config) readOAuth(o *oauthEntry, dir string, expand func(string) (string, error)) error {
	c.account = AccountOperator
	if o == nil {
		return nil
	}
	var err error
	if c.account, err = readAccount(o.Account); err != nil {
		return err
	}
	if c.account == AccountUser {
		// Its results are the user's: in a group, kept from the others.
		c.perUser = true
	}
	if c.oauth.ClientID, err = expand(o.ClientID); err != nil {
		return fmt.Errorf("oauth.clientId: %w", err)
	}
	if c.oauth.ClientSecret, err = expand(o.ClientSecret); err != nil {
		return fmt.Errorf("oauth.clientSecret: %w", err)
	}
	if c.oauth.ClientSecret != "" && c.oauth.ClientID == "" {
		return errors.New("oauth: a clientSecret needs its clientId")
	}
	switch o.AuthMethod {
	case "", "client_secret_basic", "client_secret_post", "none", "private_key_jwt":
		c.oauth.AuthMethod = o.AuthMethod
	default:
		return fmt.Errorf("oauth.tokenEndpointAuthMethod %q: want client_secret_basic, client_secret_post, private_key_jwt or none", o.AuthMethod)
	}
	for _, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\n\"\\") {
			return fmt.Errorf("oauth.scopes: %q is not a scope", sc)
		}
	}
	c.oauth.Scopes = o.Scopes
	var keyFile string
	if c.oauth.PrivateKey, keyFile, err = readPrivateKey(o, dir, expand); err != nil {
		return err
	}
	if c.oauth.IdP, err = readIdP(o.IdP, dir, expand); err != nil {
		return err
	}
	for _, f := range []string{keyFile, c.oauth.IdP.IDTokenFile} {
		if f != "" {
			c.secretFiles = append(c.secretFiles, f)
		}
	}
	return c.readGrant(o.Grant, o.IdP != nil)
}

// readGrant reads "oauth.grant", and checks that the client fits it;
// idp tells whether the entry has an "idp" object.
func (c *config) readGrant(grant string, idp bool) error {
	o := &c.oauth
	machines := fmt.Sprintf("%q or %q", mcpgram.GrantClientCredentials, mcpgram.GrantEnterprise)
	switch grant {
	case "", mcpgram.GrantAuthorizationCode:
		if len(o.PrivateKey) > 0 || o.AuthMethod == "private_key_jwt" {
			return fmt.Errorf("oauth: a private key (private_key_jwt) is taken with \"grant\": %s only", machines)
		}
	case mcpgram.GrantClientCredentials, mcpgram.GrantEnterprise:
		o.Grant = grant
	default:
		return fmt.Errorf("oauth.grant %s: want %q (a person signs in, the default), %q (mcpgram gets its token itself, with the client's secret or key) or %q (with an ID token of the company's identity provider as well)",
			quoteShort(grant), mcpgram.GrantAuthorizationCode, mcpgram.GrantClientCredentials, mcpgram.GrantEnterprise)
	}
	switch {
	case idp && o.Grant != mcpgram.GrantEnterprise:
		return fmt.Errorf("oauth.idp is taken with \"grant\": %q only", mcpgram.GrantEnterprise)
	case !idp && o.Grant == mcpgram.GrantEnterprise:
		return fmt.Errorf("oauth.grant %q needs \"idp\": the identity provider's issuer or tokenEndpoint, mcpgram's clientId there, and the idToken or idTokenFile", grant)
	case o.Grant == "":
		return nil
	}
	return c.checkMachine(grant)
}

// checkMachine checks the client of a grant by which mcpgram gets its
// token itself: the operator's, authenticated by a secret or a key.
func (c *config) checkMachine(grant string) error {
	o := &c.oauth
	switch {
	case c.account == AccountUser:
		return fmt.Errorf("oauth.grant %q gets one token for mcpgram itself, which is the operator's account: it cannot act as each user's (\"account\": %q)", grant, AccountUser)
	case o.ClientID == "":
		return fmt.Errorf("oauth.grant %q needs the clientId you registered, and its clientSecret or privateKey", grant)
	case o.ClientSecret != "" && len(o.PrivateKey) > 0:
		return errors.New("oauth: a clientSecret or a private key, not both")
	case o.ClientSecret == "" && len(o.PrivateKey) == 0:
		return fmt.Errorf("oauth.grant %q needs the client's clientSecret or privateKey (or privateKeyFile)", grant)
	case o.AuthMethod == "none":
		return fmt.Errorf("oauth.grant %q: the client must authenticate, so tokenEndpointAuthMethod cannot be \"none\"", grant)
	case (o.AuthMethod == "private_key_jwt") != (len(o.PrivateKey) > 0) && o.AuthMethod != "":
		return fmt.Errorf("oauth.tokenEndpointAuthMethod %q does not fit the client's credentials: private_key_jwt goes with a private key, the others with a clientSecret", o.AuthMethod)
	}
	return nil
}

// readIdP reads "oauth.idp" (none: nil); an ID token file is relative to
// dir, the settings file's folder, and read at each exchange, not now.
// Neither the ID token nor the secret is ever in an error.
func readIdP(e *idpEntry, dir string, expand func(string) (string, error)) (mcpgram.IdentityProvider, error) {
	var p mcpgram.IdentityProvider
	if e == nil {
		return p, nil
	}
	for _, f := range []struct {
		name string
		in   string
		out  *string
	}{
		{"issuer", e.Issuer, &p.Issuer}, {"tokenEndpoint", e.TokenEndpoint, &p.TokenEndpoint},
		{"clientId", e.ClientID, &p.ClientID}, {"clientSecret", e.ClientSecret, &p.ClientSecret},
		{"idToken", e.IDToken, &p.IDToken}, {"idTokenFile", e.IDTokenFile, &p.IDTokenFile},
	} {
		v, err := expand(f.in)
		if err != nil {
			return p, fmt.Errorf("oauth.idp.%s: %w", f.name, err)
		}
		*f.out = v
	}
	switch {
	case (p.Issuer == "") == (p.TokenEndpoint == ""):
		return p, errors.New("oauth.idp needs the identity provider's issuer or its tokenEndpoint (one of them)")
	case p.ClientID == "":
		return p, errors.New("oauth.idp needs mcpgram's clientId at the identity provider (the audience of its ID tokens)")
	case (p.IDToken == "") == (p.IDTokenFile == ""):
		return p, errors.New("oauth.idp needs the idToken (usually ${env:NAME}) or the idTokenFile that holds it (one of them)")
	}
	name, u := "issuer", p.Issuer
	if u == "" {
		name, u = "tokenEndpoint", p.TokenEndpoint
	}
	if pu, err := url.Parse(u); err != nil || pu.Host == "" || (pu.Scheme != "https" && pu.Scheme != "http") {
		return p, fmt.Errorf("oauth.idp.%s %s: not an http(s) URL", name, quoteShort(u))
	}
	if p.IDTokenFile != "" && !filepath.IsAbs(p.IDTokenFile) {
		p.IDTokenFile = filepath.Join(dir, p.IDTokenFile)
	}
	return p, nil
}

// readPrivateKey reads the entry's private key, from privateKey or the
// file privateKeyFile names (whose path it returns too), and checks that
// it is one PEM private key; what kind of key is the sign-in's to say.
// Neither the key nor the file's content is ever in an error.
func readPrivateKey(o *oauthEntry, dir string, expand func(string) (string, error)) ([]byte, string, error) {
	var key []byte
	var file string
	switch {
	case o.PrivateKey != "" && o.PrivateKeyFile != "":
		return nil, "", errors.New("oauth: privateKey or privateKeyFile, not both")
	case o.PrivateKey != "":
		k, err := expand(o.PrivateKey)
		if err != nil {
			return nil, "", fmt.Errorf("oauth.privateKey: %w", err)
		}
		key = []byte(k)
	case o.PrivateKeyFile != "":
		var err error
		if file, err = expand(o.PrivateKeyFile); err != nil {
			return nil, "", fmt.Errorf("oauth.privateKeyFile: %w", err)
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		if key, err = os.ReadFile(file); err != nil {
			return nil, "", fmt.Errorf("oauth.privateKeyFile: %w", err)
		}
	default:
		return nil, "", nil
	}
	if b, _ := pem.Decode(key); b == nil || !strings.HasSuffix(b.Type, "PRIVATE KEY") {
		return nil, "", errors.New("oauth: the private key is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
	}
	return key, file, nil
}
