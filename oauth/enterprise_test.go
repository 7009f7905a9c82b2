package oauth_test

import (
	"cmp"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
)

// The clients of enterprise-managed authorization in these tests:
// mcpgram's at the identity provider, and at the MCP server's
// authorization server, which the IdP's ID-JAGs name.
const (
	idpClient = "mcpgram-at-idp"
	asClient  = "mcpgram-at-as"
	asSecret  = "s3cret-at-the-authorization-server"
)

// enterpriseEnv is an MCP server, its authorization server and an IdP it
// trusts, with mcpgram's clients registered at both.
func enterpriseEnv(t *testing.T, idpSecret, idJAGClient string) (*oauthfake.Server, *oauthfake.IdP) {
	t.Helper()
	fake := oauthfake.Start(t)
	fake.AddMachine(oauthfake.Machine{ID: asClient, Secret: asSecret})
	idp := oauthfake.StartIdP(t, idpClient, idpSecret, idJAGClient)
	fake.TrustIdP(idp.URL(), idp.Key())
	return fake, idp
}

// A server reached by enterprise-managed authorization is called with
// nobody signing in: the hub exchanges the operator's ID token at the
// IdP (RFC 8693: every parameter the specification requires, and the
// IdP client's secret in the form when it has one) for an ID-JAG, which
// it presents at the authorization server (RFC 7523 JWT bearer grant,
// the client authenticated by Basic); the call acts as the ID token's
// subject. A refused token leads to a new exchange, with the ID token
// file read again. No ID token, secret, ID-JAG or token reaches the log.
func TestEnterpriseManaged(t *testing.T) {
	const idpSecret = "s3cret-at-the-idp"
	for _, tt := range []struct {
		name      string
		idpSecret string
		byIssuer  bool
		file      bool
	}{
		{"ID token from the environment, token endpoint, IdP client secret", idpSecret, false, false},
		{"ID token file, IdP issuer's metadata, public IdP client", "", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake, idp := enterpriseEnv(t, tt.idpSecret, asClient)
			alice := idp.IDToken(t, "alice@corp.example", time.Hour)
			idpObj := map[string]any{"clientId": idpClient, "tokenEndpoint": idp.URL() + "/token"}
			if tt.byIssuer {
				idpObj = map[string]any{"clientId": idpClient, "issuer": idp.URL()}
			}
			if tt.idpSecret != "" {
				t.Setenv("IDP_SECRET", tt.idpSecret)
				idpObj["clientSecret"] = "${env:IDP_SECRET}"
			}
			files := map[string][]byte{}
			if tt.file {
				files["id-token.jwt"] = []byte(alice + "\n")
				idpObj["idTokenFile"] = "id-token.jwt"
			} else {
				t.Setenv("ID_TOKEN", alice)
				idpObj["idToken"] = "${env:ID_TOKEN}"
			}
			obj := map[string]any{"grant": "enterprise_managed", "clientId": asClient, "clientSecret": asSecret, "idp": idpObj}
			e := startMachine(t, fake, obj, files, nil)
			if got, err := whoami(t, e.hub); err != nil || got != "alice@corp.example" {
				t.Fatalf("whoami = %q, %v; want alice@corp.example (refusals %q)", got, err, fake.Refusals())
			}
			checkExchange(t, fake, idp, alice, tt.idpSecret)

			// The token is refused: another exchange, of the ID token as
			// it is now.
			next, want := alice, "alice@corp.example"
			if tt.file {
				next, want = idp.IDToken(t, "bob@corp.example", time.Hour), "bob@corp.example"
				if err := os.WriteFile(filepath.Join(e.dir, "id-token.jwt"), []byte(next), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fake.ExpireAccessTokens()
			if got, err := whoami(t, e.hub); err != nil || got != want {
				t.Fatalf("after the token expired: whoami = %q, %v; want %s", got, err, want)
			}
			if p := idp.Posted(); len(p) != 2 || p[1].Form.Get("subject_token") != next {
				t.Errorf("the second exchange did not send the ID token as it is now (%d exchanges)", len(p))
			}
			if c := fake.Counts(); c.JWTBearer != 2 || c.Authorizations != 0 || c.ClientCredentials != 0 {
				t.Errorf("counts = %+v; want 2 JWT bearer tokens and nothing else", c)
			}
			secrets := append([]string{alice, next, asSecret}, idp.Issued()...)
			if tt.idpSecret != "" {
				secrets = append(secrets, tt.idpSecret)
			}
			checkLog(t, e.log.String(), append(secrets, fake.Tokens()...), "got a token by enterprise-managed authorization")
		})
	}
}

// checkExchange checks the one token exchange at idp and the one JWT
// bearer request at fake, parameter by parameter.
func checkExchange(t *testing.T, fake *oauthfake.Server, idp *oauthfake.IdP, idToken, idpSecret string) {
	t.Helper()
	want := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"audience":             {fake.URL()},
		"resource":             {fake.URL() + "/mcp"},
		"scope":                {"read"},
		"subject_token":        {idToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
		"client_id":            {idpClient},
	}
	if idpSecret != "" {
		want.Set("client_secret", idpSecret)
	}
	p := idp.Posted()
	if len(p) != 1 || !reflect.DeepEqual(p[0].Form, want) || p[0].BasicClient != "" {
		t.Errorf("token exchanges at the IdP = %v; want one, without Basic authentication, of %v", p, want)
	}
	issued := idp.Issued()
	if len(issued) != 1 {
		t.Fatalf("the IdP issued %d ID-JAGs, want 1", len(issued))
	}
	want = url.Values{
		"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"assertion":  {issued[0]},
		"resource":   {fake.URL() + "/mcp"},
		"scope":      {"read"},
	}
	b := fake.BearerPosted()
	if len(b) != 1 || !reflect.DeepEqual(b[0].Form, want) || b[0].BasicClient != asClient {
		t.Errorf("JWT bearer requests = %v; want one, by Basic as %s, of %v", b, asClient, want)
	}
}

// checkLog fails the test if log holds one of secrets, or lacks says.
func checkLog(t *testing.T, log string, secrets []string, says string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("the log holds the secret %q", s)
		}
	}
	if !strings.Contains(log, says) {
		t.Errorf("the log does not say %q:\n%s", says, log)
	}
}

// What the IdP or the authorization server refuses, and an answer that
// is not what the specification says, fail the sign-in with an error
// that says which and why, and holds no ID token or secret; an expired
// ID token is not even sent.
func TestEnterpriseManagedRefused(t *testing.T) {
	answer := func(status int, body map[string]any) func(url.Values) (int, any) {
		return func(url.Values) (int, any) { return status, body }
	}
	for _, tt := range []struct {
		name     string
		answer   func(url.Values) (int, any)
		jagFor   string // the client the ID-JAGs name at the authorization server
		secret   string // mcpgram's at the authorization server
		ttl      time.Duration
		endpoint string
		want     string
	}{
		{name: "no access_token", answer: answer(http.StatusOK, map[string]any{"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
			want: "the identity provider's token exchange gave no access_token (the ID-JAG)"},
		{name: "an access token, not an ID-JAG", answer: answer(http.StatusOK, map[string]any{"access_token": "at-1", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
			want: `issued a "urn:ietf:params:oauth:token-type:access_token", not an ID-JAG`},
		{name: "the IdP refuses", answer: answer(http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "Audience validation failed"}),
			want: "the identity provider refused to exchange the ID token: invalid_grant: Audience validation failed"},
		{name: "the IdP answers 500", answer: answer(http.StatusInternalServerError, map[string]any{}),
			want: "the identity provider's token endpoint answered 500 Internal Server Error"},
		{name: "the authorization server refuses the client", secret: "the-wrong-secret",
			want: "by enterprise-managed authorization: token endpoint: invalid_client: wrong client id or secret"},
		{name: "an ID-JAG for another client", jagFor: "someone-else",
			want: `token endpoint: invalid_grant: ID-JAG: client_id someone-else is not the client "mcpgram-at-as"`},
		{name: "an expired ID token", ttl: -time.Minute, want: "the ID token expired at"},
		{name: "an IdP over plain http", endpoint: "http://idp.example.com/token", want: "the identity provider's URL: http://idp.example.com/token: not https"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake, idp := enterpriseEnv(t, "", cmp.Or(tt.jagFor, asClient))
			idp.SetAnswer(tt.answer)
			idToken := idp.IDToken(t, "alice@corp.example", cmp.Or(tt.ttl, time.Hour))
			m, err := oauth.New(oauth.Options{Store: (&env{dbPath: filepath.Join(t.TempDir(), "mcpgram.db")}).open(t)})
			if err != nil {
				t.Fatal(err)
			}
			secret := cmp.Or(tt.secret, asSecret)
			req := mcpgram.SignIn{Server: "remote", ServerURL: fake.URL() + "/mcp", Config: mcpgram.OAuthConfig{
				Grant: mcpgram.GrantEnterprise, ClientID: asClient, ClientSecret: secret,
				IdP: mcpgram.IdentityProvider{TokenEndpoint: cmp.Or(tt.endpoint, idp.URL()+"/token"), ClientID: idpClient, IDToken: idToken}}}
			err = m.Login(t.Context(), req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("login: %v; want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), idToken) || strings.Contains(err.Error(), secret) {
				t.Errorf("the error holds the ID token or the secret: %v", err)
			}
			if n := len(idp.Posted()); tt.ttl < 0 && n != 0 {
				t.Errorf("an expired ID token was sent to the IdP (%d exchanges)", n)
			}
			if c := fake.Counts(); c.JWTBearer != 0 {
				t.Errorf("counts = %+v; want no token", c)
			}
		})
	}
}
