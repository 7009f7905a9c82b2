package render

import (
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// MaxButtonHost is how many characters of a host a button shows: with
// "Open " before it, a label a phone shows whole on one button.
const MaxButtonHost = 32

// ButtonHost is the host the URL raw leads to as a button names it, in
// at most n characters where it can be: the host a browser would open
// (never the user part of https://google.com@evil.com/, never the port),
// lower case, without a final dot, an international name in the letters
// DNS resolves (xn--), which tell look-alikes apart. Its registrable
// domain (the public-suffix rule: evil.com, evil.co.uk) is never cut,
// whatever n: what is cut to fit is the subdomains before it, from the
// left, marked "…" (…session-verify.evil.com), by whole labels where one
// fits. An IP address, and a host with no registrable domain (localhost,
// a single label, a public suffix itself), show whole. "" when raw has no
// host.
func ButtonHost(raw string, n int) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	host := strings.TrimRight(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return Visible(host)
	}
	if ascii, err := idna.ToASCII(host); err == nil {
		host = strings.ToLower(ascii)
	}
	host = Visible(host)
	domain, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil || utf8.RuneCountInString(host) <= n {
		return host
	}
	return cutLeft(strings.TrimSuffix(host, domain), n-utf8.RuneCountInString(domain)-1) + domain
}

// cutLeft is "…" and the end of the subdomains sub (which end in a dot)
// that fits in n characters: whole labels where at least one fits, or
// else the last label's end; "…" alone when nothing fits.
func cutLeft(sub string, n int) string {
	r := []rune(sub)
	if n <= 0 {
		return "…"
	}
	if len(r) <= n {
		return sub
	}
	tail := string(r[len(r)-n:])
	if r[len(r)-n-1] == '.' {
		return "…" + tail
	}
	if i := strings.IndexByte(tail, '.'); i >= 0 && i < len(tail)-1 {
		return "…" + tail[i+1:]
	}
	return "…" + tail
}
