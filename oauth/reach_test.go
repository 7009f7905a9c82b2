package oauth_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The test's internet: 127.0.0.2 counts as a public address, where the
// hostile remote server runs, under the name mcp.example.com; the rest
// of loopback is this machine's, where nothing may be sent.
var testNet = netip.MustParsePrefix("127.0.0.2/32")

// remote is a hostile remote server over HTTPS, a name server that says
// where its names are, a trap on this machine's loopback, and a Manager
// that signs in to the server.
type remote struct {
	fake *oauthfake.Server
	dns  *testenv.DNS
	trap *testenv.Trap
	m    *oauth.Manager
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	r := &remote{fake: oauthfake.StartTLS(t, "127.0.0.2:0", "mcp.example.com"), dns: testenv.StartDNS(t), trap: testenv.StartTrap(t)}
	r.dns.Set("mcp.example.com", "127.0.0.2")
	db := testenv.SQLite(t, "")
	var err error
	r.m, err = oauth.NewOnTestNet(oauth.Options{Store: db, Key: testKey, HTTPClient: r.fake.Client(), Resolver: r.dns.Resolver()}, testNet)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// trapAt is an address of the trap's port on host.
func (r *remote) trapAt(host string) string { return fmt.Sprintf("%s:%d", host, r.trap.Port()) }

func (r *remote) begin(t *testing.T) (string, error) {
	t.Helper()
	authURL, _, err := r.m.Begin(t.Context(), oauth.Request{SignIn: mcpgram.SignIn{Server: "remote", ServerURL: r.fake.URL() + "/mcp"}}, "http://127.0.0.1:9/callback")
	return authURL, err
}

// authorize is the person's browser: it has the authorization server
// approve, and returns the query it sends the browser back with.
func (r *remote) authorize(t *testing.T, authURL string) url.Values {
	t.Helper()
	tr := r.fake.Client().Transport.(*http.Transport).Clone()
	d := &net.Dialer{Resolver: r.dns.Resolver()}
	tr.DialContext = d.DialContext
	return browse(t, tr, authURL)
}

// A remote server's metadata that names, for a URL mcpgram posts to or
// reads, this machine's loopback (over http, or by a name that resolves
// there), a private address or the cloud's metadata address is refused
// before the person is sent to sign in, naming the field and why: no
// code is ever made, and nothing reaches the trap. The same server with
// honest metadata signs in.
func TestMetadataOutOfReach(t *testing.T) {
	tests := []struct {
		name, field string
		url         func(r *remote) string
		why         string // "": signs in
	}{
		{"honest metadata", "", nil, ""},
		{"token endpoint on loopback over http", "token_endpoint",
			func(r *remote) string { return "http://" + r.trapAt("127.0.0.1") + "/token" }, "plain http"},
		{"token endpoint named to resolve to loopback", "token_endpoint",
			func(r *remote) string { return "https://" + r.trapAt("loop.example.com") + "/token" }, "127.0.0.1 is a loopback address"},
		{"token endpoint on IPv6 loopback", "token_endpoint",
			func(r *remote) string { return "https://" + r.trapAt("[::1]") + "/token" }, "::1 is a loopback address"},
		{"token endpoint on a private address", "token_endpoint",
			func(*remote) string { return "https://10.0.0.1/token" }, "10.0.0.1 is a private network address"},
		{"token endpoint named to resolve to a private address", "token_endpoint",
			func(*remote) string { return "https://private.example.com/token" }, "10.1.2.3 is a private network address"},
		{"token endpoint at the cloud's metadata address", "token_endpoint",
			func(*remote) string { return "https://169.254.169.254/latest/meta-data/" }, "169.254.169.254 is a link-local address"},
		{"registration endpoint on loopback", "registration_endpoint",
			func(r *remote) string { return "https://" + r.trapAt("loop.example.com") + "/register" }, "127.0.0.1 is a loopback address"},
		{"revocation endpoint at the cloud's metadata address", "revocation_endpoint",
			func(*remote) string { return "https://metadata.example.com/revoke" }, "169.254.169.254 is a link-local address"},
		{"authorization endpoint on loopback", "authorization_endpoint",
			func(r *remote) string { return "https://" + r.trapAt("127.0.0.1") + "/authorize" }, "127.0.0.1 is a loopback address"},
		{"authorization server on loopback", "authorization_servers",
			func(r *remote) string { return "https://" + r.trapAt("loop.example.com") }, "127.0.0.1 is a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t)
			r.dns.Set("loop.example.com", "127.0.0.1")
			r.dns.Set("private.example.com", "10.1.2.3")
			r.dns.Set("metadata.example.com", "169.254.169.254")
			if tt.url != nil {
				hostile := tt.url(r)
				r.fake.Set(func(s *oauthfake.Server) {
					if tt.field == "authorization_servers" {
						s.ResourceMetadata = func(doc map[string]any) { doc[tt.field] = []string{hostile} }
					} else {
						s.ServerMetadata = func(doc map[string]any) { doc[tt.field] = hostile }
					}
				})
			}
			authURL, err := r.begin(t)
			if tt.why == "" {
				if err != nil {
					t.Fatalf("Begin: %v", err)
				}
				if _, err := r.m.Finish(t.Context(), r.authorize(t, authURL)); err != nil {
					t.Fatalf("Finish: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field+` "`) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Begin = %v; want a refusal naming %s and saying %q", err, tt.field, tt.why)
			}
			if c := r.fake.Counts(); c.Authorizations != 0 || c.CodeExchanges != 0 {
				t.Errorf("counts = %+v; want no authorization and no code", c)
			}
			if got := r.trap.Contacts(t); got != 0 {
				t.Errorf("the trap on loopback had %d connections, want 0", got)
			}
		})
	}
}

// Once the person has signed in, the code and the PKCE verifier go only
// where the sign-in may reach: a token endpoint whose name resolved to
// the internet when the metadata was read and to loopback when the code
// is sent (DNS rebinding) is refused as it is connected to; a token
// endpoint that redirects (307, which would post the code again) to
// plain http on loopback is not followed. Nothing reaches the trap, and
// no sign-in is kept.
func TestCodeStaysInReach(t *testing.T) {
	tests := []struct {
		name  string
		setup func(r *remote) (afterBegin func())
		why   string
	}{
		{"token endpoint rebound to loopback", func(r *remote) func() {
			r.dns.Set("rebind.example.com", "127.0.0.2")
			r.fake.Set(func(s *oauthfake.Server) {
				s.ServerMetadata = func(doc map[string]any) {
					doc["token_endpoint"] = "https://" + r.trapAt("rebind.example.com") + "/token"
				}
			})
			return func() { r.dns.Set("rebind.example.com", "127.0.0.1") }
		}, "127.0.0.1 is a loopback address"},
		{"token endpoint redirects to loopback", func(r *remote) func() {
			r.fake.Set(func(s *oauthfake.Server) { s.TokenRedirect = "http://" + r.trapAt("127.0.0.1") + "/token" })
			return func() {}
		}, "answered with a redirect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRemote(t)
			afterBegin := tt.setup(r)
			authURL, err := r.begin(t)
			if err != nil {
				t.Fatalf("Begin: %v", err)
			}
			back := r.authorize(t, authURL)
			afterBegin()
			done, err := r.m.Finish(t.Context(), back)
			if err == nil || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Finish = %v; want a refusal saying %q", err, tt.why)
			}
			if got := r.trap.Contacts(t); got != 0 {
				t.Errorf("the trap on loopback had %d connections, want 0: the code and verifier went there", got)
			}
			if list, _ := r.m.SignIns(context.WithoutCancel(t.Context()), ""); len(list) != 0 {
				t.Errorf("sign-ins after the refusal = %+v (%+v); want none", list, done)
			}
		})
	}
}
