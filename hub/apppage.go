package hub

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// The lists of an app page's declared CSP (_meta.ui.csp), by their names
// in MCP Apps, and whether each may name wss:// origins.
var cspLists = []struct {
	key     string
	connect bool
	field   func(*mcpgram.AppPage) *[]string
}{
	{"connectDomains", true, func(p *mcpgram.AppPage) *[]string { return &p.ConnectDomains }},
	{"resourceDomains", false, func(p *mcpgram.AppPage) *[]string { return &p.ResourceDomains }},
	{"frameDomains", false, func(p *mcpgram.AppPage) *[]string { return &p.FrameDomains }},
	{"baseUriDomains", false, func(p *mcpgram.AppPage) *[]string { return &p.BaseURIDomains }},
}

// appPage reads what the page at uri declares of itself in its _meta.ui
// (ui, as decoded from JSON): its CSP's origins, the permissions it asks
// for, and whether it prefers a border. It is nil when ui declares none
// of them. What a server declares
// wrong is dropped, never read wider, and noted: an origin that
// mcpgram.CheckAppOrigin refuses (after folding it to lower case and
// trimming one trailing slash), a value of the wrong kind, origins past
// mcpgram.MaxAppOrigins, a permission MCP Apps does not name.
func appPage(uri string, ui any) (*mcpgram.AppPage, []string) {
	if ui == nil {
		return nil, nil
	}
	var notes []string
	note := func(format string, args ...any) {
		notes = append(notes, fmt.Sprintf("app page %s: ", quoteShort(uri))+fmt.Sprintf(format, args...))
	}
	m, ok := ui.(map[string]any)
	if !ok {
		note("ignored _meta.%s: %s, not an object", MetaUI, jsonKind(ui))
		return nil, notes
	}
	csp, perms, border := m["csp"], m["permissions"], m["prefersBorder"]
	if csp == nil && perms == nil && border == nil {
		return nil, nil
	}
	page := &mcpgram.AppPage{}
	switch b := border.(type) {
	case nil:
	case bool:
		page.PrefersBorder = b
	default:
		note("ignored its prefersBorder: %s, not true or false", jsonKind(border))
	}
	switch c := csp.(type) {
	case nil:
	case map[string]any:
		for _, l := range cspLists {
			*l.field(page) = appOrigins(c[l.key], l.key, l.connect, note)
		}
	default:
		note("ignored its csp: %s, not an object", jsonKind(csp))
	}
	page.Permissions = appPermissions(perms, note)
	return page, notes
}

// appOrigins reads the declared list v, named key, keeping the origins
// mcpgram.CheckAppOrigin accepts, each once, at most
// mcpgram.MaxAppOrigins of them.
func appOrigins(v any, key string, connect bool, note func(string, ...any)) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		note("ignored csp.%s: %s, not a list", key, jsonKind(v))
		return nil
	}
	var out []string
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			note("ignored a value of csp.%s: %s, not a string", key, jsonKind(e))
			continue
		}
		origin := strings.TrimSuffix(strings.ToLower(s), "/")
		if err := mcpgram.CheckAppOrigin(origin, connect); err != nil {
			note("ignored %s of csp.%s: %v", quoteShort(s), key, err)
			continue
		}
		if slices.Contains(out, origin) {
			continue
		}
		if len(out) == mcpgram.MaxAppOrigins {
			note("kept the first %d origins of csp.%s", mcpgram.MaxAppOrigins, key)
			break
		}
		out = append(out, origin)
	}
	return out
}

// appPermissions reads the declared permissions v: an object whose keys
// name features, each an object ({}).
func appPermissions(v any, note func(string, ...any)) []string {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		note("ignored its permissions: %s, not an object", jsonKind(v))
		return nil
	}
	var unknown []string
	for k := range m {
		if _, ok := mcpgram.AppPermissions[k]; !ok && len(unknown) <= maxUnknown {
			unknown = append(unknown, quoteShort(k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		note("ignored permissions MCP Apps does not name: %s", listShort(unknown))
	}
	var out []string
	for _, name := range mcpgram.AppPermissionOrder {
		switch m[name].(type) {
		case nil:
		case map[string]any:
			out = append(out, name)
		default:
			note("ignored permission %s: %s, not an object", name, jsonKind(m[name]))
		}
	}
	return out
}

// notePages keeps notes on what s's apps' pages declared wrong, as a read
// found them, among the server's notes: each once, at most maxNotes, for
// as long as the hub runs it. Each new one is logged.
func (s *server) notePages(notes []string) {
	if len(notes) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range notes {
		if slices.Contains(s.pageNotes, n) || len(s.pageNotes) == maxNotes {
			continue
		}
		s.pageNotes = append(s.pageNotes, n)
		s.log.Warn("ignored part of an app page's declaration", "note", n)
	}
}
