package oauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// machineEnv is a hub whose remote server is reached by the client
// credentials grant, as the "oauth" object says; nobody signs in, there
// is no OAUTH_KEY, and everything is logged, at debug level, to log.
type machineEnv struct {
	fake *oauthfake.Server
	hub  *hub.Hub
	log  *testenv.Buffer
	// dir holds the settings file and files.
	dir string
}

func startMachine(t *testing.T, fake *oauthfake.Server, oauthObj map[string]any, files map[string][]byte, now func() time.Time) *machineEnv {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entry := map[string]any{"type": "streamableHttp", "url": fake.URL() + "/mcp", "timeout": 10, "oauth": oauthObj}
	body, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": entry}})
	settings := filepath.Join(dir, "mcp-settings.json")
	if err := os.WriteFile(settings, body, 0o600); err != nil {
		t.Fatal(err)
	}
	e := &machineEnv{fake: fake, log: &testenv.Buffer{}, dir: dir}
	logger := slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, err := oauth.New(oauth.Options{Store: (&env{dbPath: filepath.Join(dir, "mcpgram.db")}).open(t), Logger: logger, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	e.hub, err = hub.New(settings, hub.Options{Auth: m, NoWatch: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.hub.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.hub.Close() })
	return e
}

// pemKey returns a new private key of kind and its PEM (PKCS #8).
func pemKey(t *testing.T, kind string) (crypto.Signer, []byte) {
	t.Helper()
	var key crypto.Signer
	var err error
	switch kind {
	case "P-256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "P-384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "RSA":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "Ed25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// A server reached by the client credentials grant is called with no
// sign-in and no OAUTH_KEY: the hub gets its token itself, authenticated
// by the client's secret (Basic or in the form) or by a JWT signed with
// its private key (from a file beside the settings, or ${env:...}),
// which the fake checks (signature, algorithm, iss, sub, aud, exp, jti);
// it gets a new one when the server refuses the token; and no secret,
// key or token reaches the log.
func TestClientCredentials(t *testing.T) {
	const secret = "s3cret-of-the-machine-client"
	ecKey, ecPEM := pemKey(t, "P-256")
	p384Key, p384PEM := pemKey(t, "P-384")
	rsaKey, rsaPEM := pemKey(t, "RSA")
	edKey, edPEM := pemKey(t, "Ed25519")
	t.Setenv("MACHINE_SECRET", secret)
	t.Setenv("MACHINE_KEY", string(rsaPEM))
	for _, tt := range []struct {
		name    string
		machine oauthfake.Machine
		oauth   map[string]any
		files   map[string][]byte
		secrets [][]byte
	}{
		{"secret, Basic", oauthfake.Machine{ID: "m1", Secret: secret},
			map[string]any{"clientSecret": "${env:MACHINE_SECRET}"}, nil, [][]byte{[]byte(secret)}},
		{"secret in the form", oauthfake.Machine{ID: "m1", Secret: secret},
			map[string]any{"clientSecret": secret, "tokenEndpointAuthMethod": "client_secret_post"}, nil, [][]byte{[]byte(secret)}},
		{"EC P-256 key from a file", oauthfake.Machine{ID: "m1", Key: ecKey.Public()},
			map[string]any{"privateKeyFile": "client.pem"}, map[string][]byte{"client.pem": ecPEM}, [][]byte{ecPEM}},
		{"EC P-384 key from a file", oauthfake.Machine{ID: "m1", Key: p384Key.Public()},
			map[string]any{"privateKeyFile": "client.pem"}, map[string][]byte{"client.pem": p384PEM}, [][]byte{p384PEM}},
		{"RSA key from the environment", oauthfake.Machine{ID: "m1", Key: rsaKey.Public()},
			map[string]any{"privateKey": "${env:MACHINE_KEY}"}, nil, [][]byte{rsaPEM}},
		{"Ed25519 key", oauthfake.Machine{ID: "m1", Key: edKey.Public()},
			map[string]any{"privateKeyFile": "client.pem", "tokenEndpointAuthMethod": "private_key_jwt"}, map[string][]byte{"client.pem": edPEM}, [][]byte{edPEM}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthfake.Start(t)
			fake.AddMachine(tt.machine)
			obj := map[string]any{"grant": "client_credentials", "clientId": tt.machine.ID}
			for k, v := range tt.oauth {
				obj[k] = v
			}
			e := startMachine(t, fake, obj, tt.files, nil)
			for i := 1; i <= 2; i++ {
				if got, err := whoami(t, e.hub); err != nil || got != "client:m1" {
					t.Fatalf("call %d: whoami = %q, %v; want client:m1 (refusals %q)", i, got, err, fake.Refusals())
				}
				if c := fake.Counts(); c.ClientCredentials != i || c.Authorizations != 0 || c.Registrations != 0 {
					t.Errorf("call %d: counts = %+v; want %d client credentials token(s), no sign-in", i, c, i)
				}
				fake.ExpireAccessTokens() // the next call is refused, and gets another
			}
			log := e.log.String()
			for _, s := range tt.secrets {
				for _, line := range strings.Split(strings.TrimSpace(string(s)), "\n") {
					if !strings.HasPrefix(line, "-----") && strings.Contains(log, line) {
						t.Fatalf("the log holds a secret: %q", line)
					}
				}
			}
			for _, tok := range fake.Tokens() {
				if strings.Contains(log, tok) {
					t.Errorf("the log holds the token %q", tok)
				}
			}
			if !strings.Contains(log, "got a token by client credentials") {
				t.Errorf("the log does not say a token was got:\n%s", log)
			}
		})
	}
}

// A token about to expire is replaced before the request that would be
// refused: no 401 after the first.
func TestClientCredentialsBeforeExpiry(t *testing.T) {
	fake := oauthfake.Start(t)
	fake.AddMachine(oauthfake.Machine{ID: "m1", Secret: "sec"})
	c := &clock{t: time.Now()}
	e := startMachine(t, fake, map[string]any{"grant": "client_credentials", "clientId": "m1", "clientSecret": "sec"}, nil, c.now)
	if _, err := whoami(t, e.hub); err != nil {
		t.Fatal(err)
	}
	before := fake.Counts()
	c.add(time.Hour - 30*time.Second) // the token ends within the minute
	if _, err := whoami(t, e.hub); err != nil {
		t.Fatal(err)
	}
	if c := fake.Counts(); c.ClientCredentials != before.ClientCredentials+1 || c.Unauthorized != before.Unauthorized {
		t.Errorf("counts = %+v after %+v; want one more token and no more 401", c, before)
	}
}

// Credentials the authorization server refuses fail the call saying
// so, and neither the error nor the log holds the secret; an assertion
// signed with another key than the client's is refused by the fake.
func TestClientCredentialsRefused(t *testing.T) {
	const secret = "the-wrong-secret-0123456789"
	_, otherPEM := pemKey(t, "P-256")
	right, _ := pemKey(t, "P-256")
	for _, tt := range []struct {
		name   string
		oauth  map[string]any
		files  map[string][]byte
		secret string
		why    string
	}{
		{"wrong secret", map[string]any{"clientId": "m1", "clientSecret": secret}, nil, secret, "wrong client id or secret"},
		{"another key", map[string]any{"clientId": "m2", "privateKeyFile": "k.pem"}, map[string][]byte{"k.pem": otherPEM}, "", "assertion: token signature is invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := oauthfake.Start(t)
			fake.AddMachine(oauthfake.Machine{ID: "m1", Secret: "right"})
			fake.AddMachine(oauthfake.Machine{ID: "m2", Key: right.Public()})
			tt.oauth["grant"] = "client_credentials"
			e := startMachine(t, fake, tt.oauth, tt.files, nil)
			// The server's connection fails: its status says why.
			var got string
			testenv.Eventually(t, 10*time.Second, "the server to fail with invalid_client", func() bool {
				s, _ := e.hub.Catalog().Server("remote")
				got = s.Error
				return strings.Contains(got, "invalid_client")
			})
			if r := fake.Refusals(); len(r) == 0 || !strings.HasPrefix(r[0], tt.why) {
				t.Errorf("refusals = %q; want %q", r, tt.why)
			}
			if tt.secret != "" && (strings.Contains(got, tt.secret) || strings.Contains(e.log.String(), tt.secret)) {
				t.Errorf("the error or the log holds the secret: %v\n%s", got, e.log.String())
			}
		})
	}
}

// mcp login of a server reached by client credentials asks nobody: it
// gets a token, which checks the credentials, without OAUTH_KEY and
// without anyone there to sign in; wrong ones fail it.
func TestClientCredentialsLogin(t *testing.T) {
	fake := oauthfake.Start(t)
	fake.AddMachine(oauthfake.Machine{ID: "m1", Secret: "right"})
	m, err := oauth.New(oauth.Options{Store: (&env{dbPath: filepath.Join(t.TempDir(), "mcpgram.db")}).open(t)})
	if err != nil {
		t.Fatal(err)
	}
	req := mcpgram.SignIn{Server: "remote", ServerURL: fake.URL() + "/mcp",
		Config: mcpgram.OAuthConfig{Grant: mcpgram.GrantClientCredentials, ClientID: "m1", ClientSecret: "right"}}
	if err := m.Login(t.Context(), req, nil); err != nil {
		t.Fatalf("login: %v", err)
	}
	if c := fake.Counts(); c.ClientCredentials != 1 || c.Authorizations != 0 {
		t.Errorf("counts = %+v; want one client credentials token, no sign-in", c)
	}
	req.Config.ClientSecret = "wrong"
	if err := m.Login(t.Context(), req, nil); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("login with a wrong secret: %v; want invalid_client", err)
	}
}
