package apps

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
)

// With APPS_ORIGIN, the pages are framed there and served only there: one
// origin shared by every server's apps keeps each page in an opaque
// origin; a wildcard gives each server's apps its own subdomain and that
// origin, which the host page posts to and takes messages from alone. No
// page's declared origins reach the bot's own hosts, at any port.
func TestFrames(t *testing.T) {
	one, _ := mcpgram.ParseAppsOrigin("https://apps.example.com")
	wild, _ := mcpgram.ParseAppsOrigin("https://*.apps.example.com:8443")
	label := wild.Label("f")
	tests := []struct {
		name                     string
		frames                   Frames
		base, post, sandbox, src string
		at                       map[string]bool // servesAt f's page, by request host
	}{
		{"none", NewFrames("https://bot.example.com", mcpgram.AppsOrigin{}), "", "", "allow-scripts", "'self'",
			map[string]bool{"bot.example.com": true, "anything": true}},
		{"one origin", NewFrames("https://bot.example.com", one), "https://apps.example.com", "", "allow-scripts", "https://apps.example.com",
			map[string]bool{"apps.example.com": true, "APPS.example.com:443": true, "bot.example.com": false, "apps.example.com:8443": false, "x.apps.example.com": false}},
		{"a wildcard", NewFrames("https://bot.example.com", wild), "https://" + label + ".apps.example.com:8443", "https://" + label + ".apps.example.com:8443",
			"allow-scripts allow-same-origin", "https://*.apps.example.com:8443",
			map[string]bool{label + ".apps.example.com:8443": true, label + ".apps.example.com": false, wild.Label("g") + ".apps.example.com:8443": false,
				"apps.example.com:8443": false, "a.b.apps.example.com:8443": false, "bot.example.com": false}},
	}
	for _, tt := range tests {
		f := tt.frames
		if got := f.frameBase("f"); got != tt.base {
			t.Errorf("%s: f's pages at %q, want %q", tt.name, got, tt.base)
		}
		if got := f.postOrigin("f"); got != tt.post {
			t.Errorf("%s: the host page posts to %q, want %q", tt.name, got, tt.post)
		}
		if got := f.Sandbox(); got != tt.sandbox || !strings.HasSuffix(f.CSP(nil), "; sandbox "+tt.sandbox) {
			t.Errorf("%s: sandbox %q, CSP %q; want %q", tt.name, got, f.CSP(nil), tt.sandbox)
		}
		if got := f.hostCSP(); !strings.Contains(got, "; frame-src "+tt.src+";") {
			t.Errorf("%s: the host page's CSP %q, want frame-src %s", tt.name, got, tt.src)
		}
		for host, want := range tt.at {
			if got := f.servesAt(host, "f"); got != want {
				t.Errorf("%s: f's page at host %q: %v, want %v", tt.name, host, got, want)
			}
		}
	}

	page := &mcpgram.AppPage{
		ConnectDomains: []string{"https://bot.example.com:8443", "https://api.example.com", "https://*.example.com", "wss://" + label + ".apps.example.com",
			"https://notbot.example.com", "https://bot.example.com.evil.com"},
		ResourceDomains: []string{"https://*.apps.example.com", "https://cdn.example.com", "https://*.deep.apps.example.com"},
		FrameDomains:    []string{"https://apps.example.com"},
		Permissions:     []string{"camera", "microphone"},
	}
	got, dropped := tests[2].frames.withoutOwn(page)
	want := &mcpgram.AppPage{
		ConnectDomains:  []string{"https://api.example.com", "https://notbot.example.com", "https://bot.example.com.evil.com"},
		ResourceDomains: []string{"https://cdn.example.com"},
		FrameDomains:    []string{"https://apps.example.com"}, // the wildcard's parent is no page's host
		Permissions:     []string{"camera", "microphone"},
	}
	if !reflect.DeepEqual(got, want) || len(dropped) != 5 {
		t.Errorf("withoutOwn:\n%+v, dropped %q\nwant\n%+v", got, dropped, want)
	}
	if page.ConnectDomains[0] != "https://bot.example.com:8443" {
		t.Error("withoutOwn changed the page it was given")
	}
	sandbox := tests[2].frames.hostSandbox(page, []string{"camera", "geolocation"})
	wantSandbox := map[string]any{"permissions": map[string]any{"camera": map[string]any{}},
		"csp": map[string]any{"connectDomains": want.ConnectDomains, "resourceDomains": want.ResourceDomains, "frameDomains": want.FrameDomains}}
	if !reflect.DeepEqual(sandbox, wantSandbox) {
		t.Errorf("hostSandbox = %v, want %v", sandbox, wantSandbox)
	}
	if got := tests[0].frames.hostSandbox(nil, []string{"camera"}); len(got) != 0 {
		t.Errorf("hostSandbox of a page that declares nothing = %v, want {}", got)
	}
}
