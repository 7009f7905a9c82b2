package oauth_test

import (
	"slices"
	"strings"
	"testing"
)

// Resource metadata that names another resource than the server's URL
// (RFC 9728 §3.3: another origin, or a path that is neither the server's
// nor above it) is refused before anyone is sent to sign in: no
// registration, no authorization request.
func TestResourceMismatchRefused(t *testing.T) {
	for _, tt := range []struct {
		name, resource string
		refused        bool
	}{
		{"another origin", "https://evil.example.com/mcp", true},
		{"another port", "http://127.0.0.1:1/mcp", true},
		{"another path", "/other", true},
		{"a longer path", "/mcp/more", true},
		{"the server", "/mcp", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			resource := tt.resource
			if strings.HasPrefix(resource, "/") {
				resource = e.fake.URL() + resource
			}
			e.fake.ResourceMetadata = func(doc map[string]any) { doc["resource"] = resource }
			m := e.manager(t, e.open(t), testKey, true, nil)
			_, err := get(t, m, e)
			c := e.fake.Counts()
			if !tt.refused {
				if err != nil || c.Authorizations != 1 {
					t.Fatalf("resource %s: %v, %d authorizations; want signed in", resource, err, c.Authorizations)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "names \""+resource+"\", not this server") {
				t.Errorf("resource %s: error %v; want it refused, naming it", resource, err)
			}
			if c.Registrations != 0 || c.Authorizations != 0 {
				t.Errorf("counts = %+v; want no registration nor authorization", c)
			}
		})
	}
}

// offline_access (a refresh token) is asked for where the authorization
// server lists it in scopes_supported, beside the scopes the challenge
// names, and not where it does not (SEP-2207).
func TestOfflineAccessOnlyWhereOffered(t *testing.T) {
	for _, tt := range []struct {
		supported []string
		want      string
	}{
		{[]string{"read", "offline_access"}, "read offline_access"},
		{[]string{"read", "write"}, "read"},
		{nil, "read"},
	} {
		e := newEnv(t)
		e.fake.ServerMetadata = func(doc map[string]any) {
			if tt.supported != nil {
				doc["scopes_supported"] = tt.supported
			}
		}
		if _, err := get(t, e.manager(t, e.open(t), testKey, true, nil), e); err != nil {
			t.Fatal(err)
		}
		if got := e.fake.AskedScopes(); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("scopes_supported %q: asked for %q, want %q", tt.supported, got, tt.want)
		}
	}
}
