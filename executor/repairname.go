// Names a model writes slightly wrong: the server or the tool in another
// case, the server joined to the tool's name, or no server (or one that
// does not exist) for a tool only one running server has. A name is
// repaired only when exactly one tool fits it; two are fed back.

package executor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/mcpgram/mcpgram/toolcall"
)

// joiners are what models put between a server's name and a tool's when
// they write both in tool_name.
var joiners = []string{"__", ".", "/"}

// A toolMatch is a tool a call may mean, with the repairs that found it.
type toolMatch struct {
	server mcpgram.ServerInfo
	tool   string // as the server names it
	kinds  []string
}

// resolveTool finds the one tool that server and tool name, repairing
// the name where exactly one fits, or returns feedback.
func resolveTool(cat mcpgram.Catalog, server, tool string) (toolMatch, *CheckError) {
	if server != "" {
		s, kinds, found, cerr := namedServer(cat, server)
		if cerr != nil {
			return toolMatch{}, cerr
		}
		if found {
			return toolOn(cat, s, tool, kinds)
		}
	}
	// No server of that name: the tool's name says which, when one
	// running server alone has it. Tools of a server still starting are
	// not known yet, so it might have it too.
	var ms []toolMatch
	for _, s := range cat.Servers {
		if s.Coming() {
			return toolMatch{}, unknownServer(cat, server, tool)
		}
	}
	for _, s := range cat.Running() {
		ms = append(ms, toolsMatching(s, tool)...)
	}
	switch len(ms) {
	case 0:
		return toolMatch{}, unknownServer(cat, server, tool)
	case 1:
		if slices.Contains(ms[0].kinds, RepairNameJoined) {
			return ms[0], nil // the tool's name names the server
		}
		if server != "" && !related(server, ms[0].server.Name) {
			// A server the model named that does not exist and is no
			// misspelling of this one: it may have meant another service
			// altogether, and running this one's tool is not plainly meant.
			return toolMatch{}, unknownServer(cat, server, tool)
		}
		ms[0].kinds = append([]string{RepairServerInferred}, ms[0].kinds...)
		return ms[0], nil
	}
	return toolMatch{}, ambiguous(tool, ms)
}

// related reports whether a server name the model wrote can be taken for
// name: a misspelling of it (an edit or so per three letters), or one
// name, of three letters or more, inside the other, as "files" and
// "filesystem" or "server-everything" and "everything".
func related(written, name string) bool {
	w, n := strings.ToLower(written), strings.ToLower(name)
	if min(len(w), len(n)) >= 3 && (strings.Contains(w, n) || strings.Contains(n, w)) {
		return true
	}
	return suggest.Distance(w, n) <= max(1, len([]rune(w))/3)
}

// namedServer returns the server of that name, running or on its way up,
// or the one whose name differs only in case. found is false when no
// server has the name in any case.
func namedServer(cat mcpgram.Catalog, name string) (s mcpgram.ServerInfo, kinds []string, found bool, cerr *CheckError) {
	if _, ok := cat.Server(name); !ok {
		var folded []mcpgram.ServerInfo
		for _, s := range cat.Servers {
			if strings.EqualFold(s.Name, name) {
				folded = append(folded, s)
			}
		}
		switch len(folded) {
		case 0:
			return s, nil, false, nil
		case 1:
			name, kinds = folded[0].Name, []string{RepairNameCase}
		default:
			names := make([]string, len(folded))
			for i, f := range folded {
				names[i] = fmt.Sprintf("%q", f.Name)
			}
			return s, nil, false, problem(ProblemUnknownServer, "There is no server %q; several differ from it only in case: %s. Write the server's name exactly.", clean(name), strings.Join(names, ", "))
		}
	}
	s, cerr = runningServer(cat, name)
	return s, kinds, cerr == nil, cerr
}

// toolOn finds the tool on the server the call named.
func toolOn(cat mcpgram.Catalog, s mcpgram.ServerInfo, name string, kinds []string) (toolMatch, *CheckError) {
	if s.Coming() {
		// Its tools are not known until it is up: the hub waits for it,
		// and the server itself judges the name. Only the "server__tool"
		// form is cut, as no real tool repeats its server's name so.
		if rest, ok := strings.CutPrefix(name, s.Name+"__"); ok && rest != "" {
			return toolMatch{s, rest, append(kinds, RepairNameJoined)}, nil
		}
		return toolMatch{s, name, kinds}, nil
	}
	ms := toolsMatching(s, name)
	switch len(ms) {
	case 0:
		_, err := findTool(cat, s, name)
		var cerr *CheckError
		if e, ok := err.(*CheckError); ok {
			cerr = e
		}
		return toolMatch{}, cerr
	case 1:
		for _, k := range ms[0].kinds {
			kinds = appendKind(kinds, k)
		}
		ms[0].kinds = kinds
		return ms[0], nil
	}
	return toolMatch{}, ambiguous(name, ms)
}

// toolsMatching returns the tools of s that name may mean: the tool of
// that exact name alone if there is one, else those that differ only in
// case, or whose name follows s's name and a joiner.
func toolsMatching(s mcpgram.ServerInfo, name string) []toolMatch {
	if _, ok := s.Tool(name); ok {
		return []toolMatch{{s, name, nil}}
	}
	var out []toolMatch
	add := func(rest string, kinds []string) {
		if _, ok := s.Tool(rest); ok {
			out = appendMatch(out, toolMatch{s, rest, kinds})
			return
		}
		for _, t := range s.Tools {
			if strings.EqualFold(t.Name, rest) {
				out = appendMatch(out, toolMatch{s, t.Name, appendKind(kinds, RepairNameCase)})
			}
		}
	}
	add(name, nil)
	for _, j := range joiners {
		n := len(s.Name)
		if len(name) <= n+len(j) || !strings.EqualFold(name[:n], s.Name) || name[n:n+len(j)] != j {
			continue
		}
		kinds := []string{RepairNameJoined}
		if name[:n] != s.Name {
			kinds = append(kinds, RepairNameCase)
		}
		add(name[n+len(j):], kinds)
	}
	return out
}

// appendMatch adds m unless its tool is in out already, found another way.
func appendMatch(out []toolMatch, m toolMatch) []toolMatch {
	for _, o := range out {
		if o.server.Name == m.server.Name && o.tool == m.tool {
			return out
		}
	}
	return append(out, m)
}

func appendKind(kinds []string, k string) []string {
	if slices.Contains(kinds, k) {
		return kinds
	}
	return append(slices.Clip(kinds), k)
}

// unknownServer is the feedback when no server has the name given and the
// tool's name did not tell one.
func unknownServer(cat mcpgram.Catalog, server, tool string) *CheckError {
	if server == "" {
		return problem(ProblemMissingParam, "Missing value for required parameter 'server_name'. Retry with the complete block:\n%s", usage[toolcall.UseMCPTool])
	}
	_, cerr := runningServer(cat, server)
	if where := serversWithTool(cat, tool); len(where) > 0 {
		cerr.Feedback += fmt.Sprintf(" A tool %q is on server %s.", clean(tool), strings.Join(where, ", "))
	}
	return cerr
}

func ambiguous(name string, ms []toolMatch) *CheckError {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = clean(m.server.Name + "__" + m.tool)
	}
	return problem(ProblemAmbiguousTool, "The tool %q could be any of: %s. Name the server and the tool exactly:\n%s", clean(name), strings.Join(names, ", "), usage[toolcall.UseMCPTool])
}
