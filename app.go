package mcpgram

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// An AppPage is what an MCP App's page declares of itself in its
// resource's _meta.ui: the origins its Content Security Policy may add to
// the restrictive default, and the browser features it asks for. Every
// origin in it is one CheckAppOrigin accepts for its list; the hub drops
// the others, noting them.
type AppPage struct {
	// ConnectDomains may be fetched (connect-src); https or wss.
	ConnectDomains []string
	// ResourceDomains may give scripts, styles, images, fonts and media.
	ResourceDomains []string
	// FrameDomains may be framed (frame-src).
	FrameDomains []string
	// BaseURIDomains may be the document's base (base-uri).
	BaseURIDomains []string
	// Permissions are the features it asks for, among AppPermissions,
	// in that order.
	Permissions []string
	// PrefersBorder: the page asks the host for a visible border and
	// background (false when it asks for none, or says nothing).
	PrefersBorder bool
}

// AppPermissions are the browser features an app's page may ask for, by
// MCP Apps' names, and the Permissions Policy feature each is.
var AppPermissions = map[string]string{
	"camera":         "camera",
	"microphone":     "microphone",
	"geolocation":    "geolocation",
	"clipboardWrite": "clipboard-write",
}

// AppPermissionOrder is AppPermissions' names in a fixed order.
var AppPermissionOrder = []string{"camera", "microphone", "geolocation", "clipboardWrite"}

// Bounds of what a page may declare: origins per list, and bytes per
// origin.
const (
	MaxAppOrigins     = 16
	MaxAppOriginBytes = 200
)

// CheckAppOrigin says why s cannot be an origin of an app's declared
// CSP, or nil. An origin is https://host or https://host:port, with host
// a DNS name in lower case, or a wildcard of its subdomains,
// https://*.example.com (two labels at least after the star); connect
// domains may be wss:// too. Never a path, a keyword ('self',
// 'unsafe-eval'), a bare *, or anything (quotes, semicolons, white space)
// that would change the meaning of the header it goes in. (The hub folds
// a declared origin to lower case, and trims one trailing slash, before
// it asks.)
func CheckAppOrigin(s string, connect bool) error {
	if len(s) > MaxAppOriginBytes {
		return fmt.Errorf("over %d bytes", MaxAppOriginBytes)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !(scheme == "https" || connect && scheme == "wss") {
		if connect {
			return fmt.Errorf("not an https:// or wss:// origin")
		}
		return fmt.Errorf("not an https:// origin")
	}
	host, port, hasPort := strings.Cut(rest, ":")
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Errorf("a port that is not a number from 1 to 65535")
		}
	}
	wild := strings.HasPrefix(host, "*.")
	labels := strings.Split(strings.TrimPrefix(host, "*."), ".")
	if wild && len(labels) < 2 {
		return fmt.Errorf("a wildcard of a top-level domain")
	}
	for _, l := range labels {
		if !dnsLabel(l) {
			return fmt.Errorf("not a host name in lower case (letters, digits, hyphens, dots; a wildcard only as *. first)")
		}
	}
	return nil
}

// dnsLabel reports whether l is one label of a DNS name: 1 to 63 lower
// case letters, digits and hyphens, no hyphen at either end.
func dnsLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range []byte(l) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// An AppsOrigin is where the bot serves the apps' pages apart from the
// host page that frames them (APPS_ORIGIN), the other origin MCP Apps
// asks a web host to sandbox them in. It is either one origin,
// https://apps.example.com[:port], which every server's apps share (so
// each keeps an opaque origin inside it), or a wildcard,
// https://*.apps.example.com[:port], of which each server's apps get a
// subdomain of their own (see Label), and its origin. The zero
// AppsOrigin is none.
type AppsOrigin struct {
	// Host is the host name, in lower case; for a wildcard, the name
	// after its "*.".
	Host string
	// Port is the port, "" for https's 443.
	Port     string
	Wildcard bool
}

// ParseAppsOrigin reads s as an AppsOrigin: https://, a host name (or a
// wildcard of its subdomains, of two labels at least after the star), an
// optional port, and nothing else (one trailing slash aside).
func ParseAppsOrigin(s string) (AppsOrigin, error) {
	origin := strings.TrimSuffix(strings.ToLower(s), "/")
	if err := CheckAppOrigin(origin, false); err != nil {
		return AppsOrigin{}, fmt.Errorf("want https://host, https://host:port or https://*.host[:port]: %q is %w", s, err)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(origin, "https://"), ":")
	if port == "443" {
		port = ""
	}
	o := AppsOrigin{Host: host, Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		o.Host, o.Wildcard = rest, true
	}
	return o, nil
}

// IsZero reports whether o is none.
func (o AppsOrigin) IsZero() bool { return o.Host == "" }

// Label is the DNS label of server's apps under a wildcard AppsOrigin: a
// hash of its name, the same on every instance and after every restart.
func (o AppsOrigin) Label(server string) string {
	sum := sha256.Sum256([]byte("mcpgram apps origin\x00" + server))
	return hex.EncodeToString(sum[:16])
}

// For is the origin server's apps are served at: https://, its label's
// subdomain under a wildcard, and the port.
func (o AppsOrigin) For(server string) string {
	host := o.Host
	if o.Wildcard {
		host = o.Label(server) + "." + host
	}
	return "https://" + o.withPort(host)
}

// Source is o as a source of a Content Security Policy: the one origin,
// or every subdomain of the wildcard.
func (o AppsOrigin) Source() string {
	if o.Wildcard {
		return "https://" + o.withPort("*."+o.Host)
	}
	return "https://" + o.withPort(o.Host)
}

func (o AppsOrigin) withPort(host string) string {
	if o.Port == "" {
		return host
	}
	return host + ":" + o.Port
}

// Match reports whether a request's Host header names o (https's port
// 443, said or not, is the default), and its label under a wildcard.
func (o AppsOrigin) Match(requestHost string) (label string, ok bool) {
	if o.IsZero() {
		return "", false
	}
	host, port := strings.ToLower(requestHost), ""
	if h, p, err := net.SplitHostPort(host); err == nil {
		host, port = h, p
	}
	if port == "443" {
		port = ""
	}
	if port != o.Port {
		return "", false
	}
	if !o.Wildcard {
		return "", host == o.Host
	}
	label, ok = strings.CutSuffix(host, "."+o.Host)
	return label, ok && dnsLabel(label)
}
