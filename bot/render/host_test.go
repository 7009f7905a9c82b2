package render_test

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/bot/render"
	"golang.org/x/net/publicsuffix"
)

// A URL button names the host a browser opens: its registrable domain in
// full however long the rest, the rest cut from the left.
func TestButtonHost(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct{ name, url, want string }{
		{"short", "https://login.evil.example/bank?session=1", "login.evil.example"},
		{"long subdomains", "https://accounts.google.com.signin.session-verify.evil.com/x", "…signin.session-verify.evil.com"},
		{"one long label", "https://" + long + ".evil.com/", "…" + strings.Repeat("a", 22) + ".evil.com"},
		{"cut where a label starts", "https://xx.google.com.signin.session-verifyy.evil.com", "…signin.session-verifyy.evil.com"},
		{"two-part suffix", "https://accounts.google.com.session-verify.evil.co.uk/", "…com.session-verify.evil.co.uk"},
		{"trailing dot", "https://evil.com./", "evil.com"},
		{"trailing dot, long", "https://accounts.google.com.signin.session-verify.evil.com./", "…signin.session-verify.evil.com"},
		{"upper case", "https://ACCOUNTS.Google.COM.signin.session-verify.EVIL.com/", "…signin.session-verify.evil.com"},
		{"port", "https://evil.com:8443/login", "evil.com"},
		{"user info", "https://google.com@evil.com/", "evil.com"},
		{"user info and password", "https://google.com:443@evil.com:80/", "evil.com"},
		{"long registrable domain", "https://www." + long[:60] + ".com/", "…" + long[:60] + ".com"},
		{"international", "https://bücher.example/", "xn--bcher-kva.example"},
		{"look-alike", "https://аррӏе.com/", "xn--80ak6aa92e.com"},
		{"long international", "https://accounts.google.com.signin.session.bücher.example/", "…session.xn--bcher-kva.example"},
		{"IPv4", "http://127.0.0.1:8080/", "127.0.0.1"},
		{"IPv6", "http://[2001:db8:85a3:0:0:8a2e:370:7334]:443/", "2001:db8:85a3:0:0:8a2e:370:7334"},
		{"localhost", "http://localhost:3000/cb", "localhost"},
		{"single label", "http://" + long[:50] + "/", long[:50]},
		{"public suffix itself", "https://github.io/", "github.io"},
		{"under a private suffix", "https://accounts.google.com.signin.session-verify.evil.github.io/", "…session-verify.evil.github.io"},
		{"no host", "mailto:a@b.c", ""},
		{"not a URL", "https://evil.com:port/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.ButtonHost(tt.url, render.MaxButtonHost)
			if got != tt.want {
				t.Errorf("ButtonHost(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

// Whatever the URL, the button names the host the URL leads to: its
// registrable domain whole at the end, within the bound (or the domain
// and "…" where the domain alone is longer), with nothing hidden.
func FuzzButtonHost(f *testing.F) {
	for _, s := range []string{
		"https://accounts.google.com.signin.session-verify.evil.com/",
		"https://google.com@evil.com/", "https://evil.com./", "HTTPS://EVIL.COM:443",
		"https://bücher.example", "http://[::1]:80/", "http://localhost", "https://a..b.com",
		"https://" + strings.Repeat("x.", 80) + "evil.co.uk", "https://evil\u202e.com", "https://%65vil.com",
	} {
		f.Add(s, render.MaxButtonHost)
	}
	f.Fuzz(func(t *testing.T, raw string, n int) {
		n = n%64 + 1
		if n < 1 {
			n += 64
		}
		got, whole := render.ButtonHost(raw, n), render.ButtonHost(raw, 1<<20)
		if render.Visible(whole) != whole || strings.ContainsAny(whole, "@/?#") {
			t.Fatalf("ButtonHost(%q) = %q: more than the host, or a hidden character", raw, whole)
		}
		if u, err := url.Parse(raw); whole != "" && (err != nil || u.Hostname() == "") {
			t.Fatalf("ButtonHost(%q) = %q for a URL without a host", raw, whole)
		}
		if got == whole {
			return
		}
		domain, err := publicsuffix.EffectiveTLDPlusOne(whole)
		if err != nil {
			t.Fatalf("ButtonHost(%q, %d) = %q cuts %q, which has no registrable domain", raw, n, got, whole)
		}
		kept, cut := strings.CutPrefix(got, "…")
		if !cut || !strings.HasSuffix(whole, kept) || !strings.HasSuffix(kept, domain) {
			t.Fatalf("ButtonHost(%q, %d) = %q, want the end of %q, whole from %q", raw, n, got, whole, domain)
		}
		if l := utf8.RuneCountInString(got); l > max(n, utf8.RuneCountInString(domain)+1) {
			t.Fatalf("ButtonHost(%q, %d) = %q is %d characters", raw, n, got, l)
		}
	})
}
