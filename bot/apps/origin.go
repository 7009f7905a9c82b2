package apps

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// Frames is where and how the apps' pages are framed, apart from the host
// page: under the host page's own origin, each page in an opaque origin
// (the zero Origin), or at APPS_ORIGIN (see mcpgram.AppsOrigin): there,
// in an opaque origin too when all servers' apps share the one origin,
// and in their server's own origin under a wildcard.
type Frames struct {
	Origin mcpgram.AppsOrigin
	// Own are the host names of the bot's own pages (PUBLIC_URL's), which
	// no page's declared origins may reach, nor APPS_ORIGIN's.
	Own []string
}

// NewFrames returns the Frames of a bot at publicURL whose apps are
// served at origin (zero: under publicURL).
func NewFrames(publicURL string, origin mcpgram.AppsOrigin) Frames {
	f := Frames{Origin: origin}
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		f.Own = []string{strings.ToLower(u.Hostname())}
	}
	if !origin.IsZero() {
		own := origin.Host
		if origin.Wildcard {
			own = "*." + own
		}
		f.Own = append(f.Own, own)
	}
	return f
}

// sameOrigin reports whether a page keeps an origin of its own, its
// server's under a wildcard APPS_ORIGIN, rather than an opaque one.
func (f Frames) sameOrigin() bool { return f.Origin.Wildcard }

// Sandbox is the flags of the frame's sandbox attribute, and of its
// page's CSP sandbox directive.
func (f Frames) Sandbox() string {
	if f.sameOrigin() {
		return "allow-scripts allow-same-origin"
	}
	return "allow-scripts"
}

// frameBase is where server's pages are served: a path under the host
// page's origin, or APPS_ORIGIN's origin for server.
func (f Frames) frameBase(server string) string {
	if f.Origin.IsZero() {
		return ""
	}
	return f.Origin.For(server)
}

// postOrigin is the origin the host page posts to server's frame at, and
// takes its messages from: its own under a wildcard APPS_ORIGIN, else ""
// (an opaque origin has no name to post to).
func (f Frames) postOrigin(server string) string {
	if f.sameOrigin() {
		return f.Origin.For(server)
	}
	return ""
}

// hostCSP is the host page's policy: its own script and endpoints, and
// frames of its own origin, or of APPS_ORIGIN.
func (f Frames) hostCSP() string {
	frames := "'self'"
	if !f.Origin.IsZero() {
		frames = f.Origin.Source()
	}
	return "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-src " + frames + "; base-uri 'none'; form-action 'none'"
}

// register adds the route of the apps' pages: under the host page's
// routes, or, with APPS_ORIGIN, on its host alone, which serves nothing
// else.
func (f Frames) register(r Routes, frame http.HandlerFunc) {
	if f.Origin.IsZero() {
		r.Handle("GET "+PathPrefix+"{token}/frame", frame)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+PathPrefix+"{token}/frame", frame)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Not found: this host serves only the pages of MCP Apps.", http.StatusNotFound)
	})
	r.HandleHost(func(host string) bool { _, ok := f.Origin.Match(host); return ok }, mux)
}

// servesAt reports whether a request to host may get server's page: any
// without APPS_ORIGIN; at a wildcard APPS_ORIGIN, only at server's own
// subdomain.
func (f Frames) servesAt(host, server string) bool {
	label, ok := f.Origin.Match(host)
	switch {
	case f.Origin.IsZero():
		return true
	case f.Origin.Wildcard:
		return ok && label == f.Origin.Label(server)
	}
	return ok
}

// withoutOwn is page without the declared origins that reach one of the
// bot's own hosts (f.Own, any port), and which ones those were.
func (f Frames) withoutOwn(page *mcpgram.AppPage) (*mcpgram.AppPage, []string) {
	if page == nil || len(f.Own) == 0 {
		return page, nil
	}
	out := *page
	var dropped []string
	for _, list := range []*[]string{&out.ConnectDomains, &out.ResourceDomains, &out.FrameDomains, &out.BaseURIDomains} {
		*list = slices.DeleteFunc(slices.Clone(*list), func(o string) bool {
			if f.reachesOwn(o) {
				dropped = append(dropped, o)
				return true
			}
			return false
		})
	}
	return &out, dropped
}

// reachesOwn reports whether the declared origin o names a host of f.Own.
func (f Frames) reachesOwn(o string) bool {
	_, rest, _ := strings.Cut(o, "://")
	host, _, _ := strings.Cut(rest, ":")
	return slices.ContainsFunc(f.Own, func(own string) bool { return overlap(host, own) })
}

// overlap reports whether the host patterns a and b, each a host name or
// *. and a name for its subdomains, have a host in common.
func overlap(a, b string) bool {
	as, aw := strings.CutPrefix(a, "*.")
	bs, bw := strings.CutPrefix(b, "*.")
	switch {
	case !aw && !bw:
		return a == b
	case aw && !bw:
		return strings.HasSuffix(b, "."+as)
	case !aw && bw:
		return strings.HasSuffix(a, "."+bs)
	}
	return as == bs || strings.HasSuffix(as, "."+bs) || strings.HasSuffix(bs, "."+as)
}
