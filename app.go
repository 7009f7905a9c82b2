package mcpgram

import (
	"fmt"
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
