package hub_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// testPEM stands for a private key: the settings check that it is PEM,
// the sign-in parses it.
const testPEM = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"

// An entry's "oauth" object: the client credentials grant with a secret
// or a private key (inline through ${env:...}, or a file beside the
// settings), enterprise-managed authorization with its identity provider
// and ID token (through ${env:...}, or a file beside the settings), and
// each mistake refused, naming the setting and what is wanted, without
// the secret, the key or the ID token.
func TestOAuthSettings(t *testing.T) {
	t.Setenv("TEST_CLIENT_KEY", testPEM)
	t.Setenv("TEST_CLIENT_SECRET", "the-secret-value")
	cc := func(extra map[string]any) map[string]any {
		o := map[string]any{"grant": "client_credentials", "clientId": "bot"}
		for k, v := range extra {
			o[k] = v
		}
		return o
	}
	t.Setenv("TEST_ID_TOKEN", "the-id-token-value")
	em := func(idp map[string]any) map[string]any {
		return map[string]any{"grant": "enterprise_managed", "clientId": "bot", "clientSecret": "${env:TEST_CLIENT_SECRET}", "idp": idp}
	}
	idpToken := map[string]any{"tokenEndpoint": "https://idp.example/token", "clientId": "bot-at-idp", "idToken": "${env:TEST_ID_TOKEN}"}
	for _, tt := range []struct {
		name  string
		oauth map[string]any
		want  mcpgram.OAuthConfig // Grant, AuthMethod, whether a key is read, and the IdP
		err   string
	}{
		{"enterprise-managed, ID token from the environment", em(idpToken), mcpgram.OAuthConfig{Grant: "enterprise_managed",
			IdP: mcpgram.IdentityProvider{TokenEndpoint: "https://idp.example/token", ClientID: "bot-at-idp", IDToken: "the-id-token-value"}}, ""},
		{"enterprise-managed, ID token file", em(map[string]any{"issuer": "https://idp.example", "clientId": "i", "clientSecret": "${env:TEST_CLIENT_SECRET}", "idTokenFile": "id.jwt"}),
			mcpgram.OAuthConfig{Grant: "enterprise_managed",
				IdP: mcpgram.IdentityProvider{Issuer: "https://idp.example", ClientID: "i", ClientSecret: "the-secret-value", IDTokenFile: "id.jwt"}}, ""},
		{"enterprise-managed without idp", em(nil), mcpgram.OAuthConfig{}, `oauth.grant "enterprise_managed" needs "idp"`},
		{"idp without the grant", cc(map[string]any{"clientSecret": "x", "idp": idpToken}), mcpgram.OAuthConfig{}, `oauth.idp is taken with "grant": "enterprise_managed" only`},
		{"idp without a URL", em(map[string]any{"clientId": "i", "idToken": "t"}), mcpgram.OAuthConfig{}, `oauth.idp needs the identity provider's issuer or its tokenEndpoint`},
		{"idp with both URLs", em(map[string]any{"issuer": "https://a", "tokenEndpoint": "https://a/t", "clientId": "i", "idToken": "t"}), mcpgram.OAuthConfig{},
			`oauth.idp needs the identity provider's issuer or its tokenEndpoint (one of them)`},
		{"idp URL not http", em(map[string]any{"issuer": "idp.example", "clientId": "i", "idToken": "t"}), mcpgram.OAuthConfig{}, `oauth.idp.issuer "idp.example": not an http(s) URL`},
		{"idp without a client", em(map[string]any{"issuer": "https://a", "idToken": "t"}), mcpgram.OAuthConfig{}, `oauth.idp needs mcpgram's clientId at the identity provider`},
		{"idp without an ID token", em(map[string]any{"issuer": "https://a", "clientId": "i"}), mcpgram.OAuthConfig{}, `oauth.idp needs the idToken`},
		{"idp with two ID tokens", em(map[string]any{"issuer": "https://a", "clientId": "i", "idToken": "${env:TEST_ID_TOKEN}", "idTokenFile": "id.jwt"}), mcpgram.OAuthConfig{},
			`the idToken (usually ${env:NAME}) or the idTokenFile that holds it (one of them)`},
		{"enterprise-managed for each user", map[string]any{"grant": "enterprise_managed", "clientId": "bot", "clientSecret": "x", "idp": idpToken, "account": "user"},
			mcpgram.OAuthConfig{}, `cannot act as each user's`},
		{"secret", cc(map[string]any{"clientSecret": "${env:TEST_CLIENT_SECRET}"}),
			mcpgram.OAuthConfig{Grant: "client_credentials"}, ""},
		{"key from the environment", cc(map[string]any{"privateKey": "${env:TEST_CLIENT_KEY}"}),
			mcpgram.OAuthConfig{Grant: "client_credentials", PrivateKey: []byte(testPEM)}, ""},
		{"key file", cc(map[string]any{"privateKeyFile": "client.pem", "tokenEndpointAuthMethod": "private_key_jwt"}),
			mcpgram.OAuthConfig{Grant: "client_credentials", AuthMethod: "private_key_jwt", PrivateKey: []byte(testPEM)}, ""},
		{"authorization code", map[string]any{"grant": "authorization_code", "clientId": "bot"}, mcpgram.OAuthConfig{}, ""},
		{"unknown grant", map[string]any{"grant": "password"}, mcpgram.OAuthConfig{},
			`oauth.grant "password": want "authorization_code" (a person signs in, the default), "client_credentials" (mcpgram gets its token itself, with the client's secret or key) or "enterprise_managed"`},
		{"no client id", map[string]any{"grant": "client_credentials"}, mcpgram.OAuthConfig{}, `needs the clientId you registered`},
		{"no credentials", cc(nil), mcpgram.OAuthConfig{}, `needs the client's clientSecret or privateKey`},
		{"both", cc(map[string]any{"clientSecret": "x", "privateKeyFile": "client.pem"}), mcpgram.OAuthConfig{}, `a clientSecret or a private key, not both`},
		{"two keys", cc(map[string]any{"privateKey": testPEM, "privateKeyFile": "client.pem"}), mcpgram.OAuthConfig{}, `privateKey or privateKeyFile, not both`},
		{"no key file", cc(map[string]any{"privateKeyFile": "missing.pem"}), mcpgram.OAuthConfig{}, `oauth.privateKeyFile: open`},
		{"not PEM", cc(map[string]any{"privateKey": "${env:TEST_CLIENT_SECRET}"}), mcpgram.OAuthConfig{}, `the private key is not a PEM private key`},
		{"each user's", cc(map[string]any{"clientSecret": "x", "account": "user"}), mcpgram.OAuthConfig{}, `cannot act as each user's`},
		{"no authentication", cc(map[string]any{"clientSecret": "x", "tokenEndpointAuthMethod": "none"}), mcpgram.OAuthConfig{}, `cannot be "none"`},
		{"method of a key with a secret", cc(map[string]any{"clientSecret": "x", "tokenEndpointAuthMethod": "private_key_jwt"}), mcpgram.OAuthConfig{},
			`private_key_jwt goes with a private key`},
		{"key without the grant", map[string]any{"clientId": "bot", "privateKeyFile": "client.pem"}, mcpgram.OAuthConfig{},
			`a private key (private_key_jwt) is taken with "grant": "client_credentials" or "enterprise_managed" only`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "client.pem"), []byte(testPEM), 0o600); err != nil {
				t.Fatal(err)
			}
			path := testenv.WriteSettings(t, dir, map[string]any{"s": map[string]any{"type": "streamableHttp", "url": "http://127.0.0.1:1/mcp", "oauth": tt.oauth}})
			h := testenv.StartHub(t, path, fastOptions())
			r, err := h.Remote("s")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "the-secret-value") || strings.Contains(err.Error(), "AAAA") || strings.Contains(err.Error(), "the-id-token-value") {
					t.Errorf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.IdP.IDTokenFile != "" {
				tt.want.IdP.IDTokenFile = filepath.Join(dir, tt.want.IdP.IDTokenFile) // relative to the settings
			}
			if got := r.OAuth; got.Grant != tt.want.Grant || got.AuthMethod != tt.want.AuthMethod || string(got.PrivateKey) != string(tt.want.PrivateKey) || got.IdP != tt.want.IdP {
				t.Errorf("oauth = %v (key %q, idp %+v), want %v (key %q, idp %+v)", got, got.PrivateKey, got.IdP, tt.want, tt.want.PrivateKey, tt.want.IdP)
			}
			if s := r.OAuth.String(); strings.Contains(s, "the-secret-value") || strings.Contains(s, "AAAA") || strings.Contains(s, "the-id-token-value") {
				t.Errorf("String shows a secret: %s", s)
			}
		})
	}
}

// The private key and ID token files an entry's "oauth" names are the
// bot's: a sandboxed server shown the folder that holds them reads the
// other files there, never them.
func TestSandboxHidesOAuthFiles(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testenv.RequireSandbox(t, mode)
			hidesOAuthFiles(t, mode)
		})
	}
}

// hidesOAuthFiles is TestSandboxHidesOAuthFiles in one sandbox mode.
func hidesOAuthFiles(t *testing.T, mode string) {
	d := testenv.OpenDir(t)
	files := map[string]string{"keys/client.pem": testPEM, "keys/id.jwt": "the-id-token-value", "keys/readme.txt": "not a secret"}
	var all []string
	for name, content := range files {
		p := filepath.Join(d, name)
		all = append(all, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := testenv.WriteSettings(t, d, map[string]any{
		"hostile": map[string]any{"command": testenv.TestServer(t, "hostile"),
			"sandbox": map[string]any{"mode": mode, "readOnlyPaths": []string{filepath.Join(d, "keys")}}},
		"remote": map[string]any{"type": "streamableHttp", "url": "http://127.0.0.1:1/mcp", "oauth": map[string]any{
			"grant": "enterprise_managed", "clientId": "bot", "privateKeyFile": "keys/client.pem",
			"idp": map[string]any{"issuer": "https://idp.example", "clientId": "i", "idTokenFile": "keys/id.jwt"}}},
	})
	h := testenv.StartHub(t, path, fastOptions())
	for _, r := range probe(t, h, "hostile", nil, all).Results {
		if !strings.HasPrefix(r.Target, d) {
			continue
		}
		if got, want := r.Err == "" && r.Bytes > 0, r.Target == filepath.Join(d, "keys/readme.txt"); got != want {
			t.Errorf("%s: read %v (%s), want %v", r.Target, got, r.Err, want)
		}
	}
}
