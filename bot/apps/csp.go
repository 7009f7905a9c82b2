package apps

import (
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// FrameCSP is the Content Security Policy of an app's page that declares
// page (nil: nothing): DefaultFrameCSP with exactly the declared origins
// added, as MCP Apps maps them, and no more:
//   - ResourceDomains to script-src, style-src, img-src, media-src, and a
//     font-src of their own;
//   - ConnectDomains in place of connect-src's 'none';
//   - FrameDomains as frame-src, BaseURIDomains as base-uri (without
//     them, default-src 'none' keeps frames out, and the base is left as
//     the default leaves it).
//
// The hub checked the origins already; they are checked again here, so
// that no origin mcpgram.CheckAppOrigin refuses (a keyword, a bare *,
// quotes, a semicolon, white space) reaches the header, and at most
// mcpgram.MaxAppOrigins of a list do.
func FrameCSP(page *mcpgram.AppPage) string { return Frames{}.CSP(page) }

// CSP is FrameCSP under f: without the declared origins that reach the
// bot's own hosts, and with f's sandbox.
func (f Frames) CSP(page *mcpgram.AppPage) string {
	page, _ = f.withoutOwn(page)
	if page == nil {
		page = &mcpgram.AppPage{}
	}
	resources := origins(page.ResourceDomains, false)
	connect := origins(page.ConnectDomains, true)
	if len(connect) == 0 {
		connect = []string{"'none'"}
	}
	directives := [][]string{
		{"default-src", "'none'"},
		append([]string{"script-src", "'self'", "'unsafe-inline'"}, resources...),
		append([]string{"style-src", "'self'", "'unsafe-inline'"}, resources...),
		append([]string{"img-src", "'self'", "data:"}, resources...),
		append([]string{"font-src"}, resources...),
		append([]string{"media-src", "'self'", "data:"}, resources...),
		append([]string{"connect-src"}, connect...),
		append([]string{"frame-src"}, origins(page.FrameDomains, false)...),
		append([]string{"base-uri"}, origins(page.BaseURIDomains, false)...),
		append([]string{"sandbox"}, strings.Fields(f.Sandbox())...),
	}
	var b strings.Builder
	for _, d := range directives {
		if len(d) == 1 {
			continue // a directive of the declared origins alone, and none declared
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(strings.Join(d, " "))
	}
	return b.String()
}

// origins is the origins of list that mcpgram.CheckAppOrigin accepts,
// each once, at most mcpgram.MaxAppOrigins of them.
func origins(list []string, connect bool) []string {
	var out []string
	for _, o := range list {
		if len(out) == mcpgram.MaxAppOrigins {
			break
		}
		if mcpgram.CheckAppOrigin(o, connect) == nil && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// FrameAllow is the frame's allow attribute (its Permissions Policy) for
// a page that declares page: the features it asks for that the operator
// grants (APPS_PERMISSIONS, by MCP Apps' names), "" for none.
func FrameAllow(page *mcpgram.AppPage, granted []string) string {
	var out []string
	for _, name := range grantedPermissions(page, granted) {
		out = append(out, mcpgram.AppPermissions[name])
	}
	return strings.Join(out, "; ")
}

// grantedPermissions is the permissions page asks for that the operator
// grants, by MCP Apps' names, in their order.
func grantedPermissions(page *mcpgram.AppPage, granted []string) []string {
	if page == nil {
		return nil
	}
	var out []string
	for _, name := range mcpgram.AppPermissionOrder {
		if slices.Contains(page.Permissions, name) && slices.Contains(granted, name) {
			out = append(out, name)
		}
	}
	return out
}

// hostSandbox is what MCP Apps' ui/initialize tells the app of its
// sandbox (hostCapabilities.sandbox): the permissions it was granted, and
// the origins its policy added, by MCP Apps' names.
func (f Frames) hostSandbox(page *mcpgram.AppPage, granted []string) map[string]any {
	page, _ = f.withoutOwn(page)
	out := map[string]any{}
	if page == nil {
		return out
	}
	if names := grantedPermissions(page, granted); len(names) > 0 {
		perms := map[string]any{}
		for _, name := range names {
			perms[name] = map[string]any{}
		}
		out["permissions"] = perms
	}
	csp := map[string]any{}
	for key, list := range map[string][]string{"connectDomains": origins(page.ConnectDomains, true), "resourceDomains": origins(page.ResourceDomains, false),
		"frameDomains": origins(page.FrameDomains, false), "baseUriDomains": origins(page.BaseURIDomains, false)} {
		if len(list) > 0 {
			csp[key] = list
		}
	}
	if len(csp) > 0 {
		out["csp"] = csp
	}
	return out
}
