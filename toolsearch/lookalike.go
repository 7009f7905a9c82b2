package toolsearch

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpgram/mcpgram"
)

// Tools of different servers look alike when a model or a person could
// take one for the other by what they read of it:
//
//   - their names are the same but for case and the characters between
//     words (create_issue, createIssue, Create-Issue), or
//   - their descriptions are the same but for case, punctuation, common
//     English words and word endings (their stems, as the search reads
//     them, in the same order), and say something: at least
//     minLookalikeStems stems.
//
// The rule is exact on those normal forms, not a distance: a copy of
// another server's tool's name or wording is caught, two tools that
// only do similar things (list_branches of GitHub and of GitLab) are not,
// and it costs one map lookup a tool. Tools of one server never look
// alike to each other: a server is trusted with its own names.
const minLookalikeStems = 3

// A Lookalike is a tool of another server that looks like a given one
// (see above): a model and a user must tell them apart by their servers.
type Lookalike struct {
	Server, Tool string
}

// nameKey is a tool's name as the rule compares it: its letters and
// digits, lower case; "" (for a name of only separators) compares to
// nothing.
func nameKey(name string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, name)
}

// descriptionKey is a tool's description as the rule compares it, from
// its stems (Stems) in order; "" when it says too little to compare.
func descriptionKey(stems []string) string {
	if len(stems) < minLookalikeStems {
		return ""
	}
	return strings.Join(stems, " ")
}

// alike reports whether tools of keys (a name's, a description's) look
// alike.
func alike(name1, described1, name2, described2 string) bool {
	return name1 != "" && name1 == name2 || described1 != "" && described1 == described2
}

// sortLookalikes sorts ls by server and name, each once.
func sortLookalikes(ls []Lookalike) []Lookalike {
	slices.SortFunc(ls, func(a, b Lookalike) int {
		return cmp.Or(strings.Compare(a.Server, b.Server), strings.Compare(a.Tool, b.Tool))
	})
	return slices.Compact(ls)
}

// Lookalikes returns the tools of cat's running servers, other than
// server, that look like its tool named tool (see the rule above), by
// server and name; nil when there are none or server runs no such tool.
func Lookalikes(cat mcpgram.Catalog, server, tool string) []Lookalike {
	s, ok := cat.Server(server)
	if !ok || s.Status != mcpgram.StatusRunning {
		return nil
	}
	t, ok := s.Tool(tool)
	if !ok {
		return nil
	}
	name, described := nameKey(t.Name), descriptionKey(Stems(t.Description))
	var out []Lookalike
	for _, o := range cat.Running() {
		if o.Name == server {
			continue
		}
		for _, u := range o.Tools {
			if alike(name, described, nameKey(u.Name), descriptionKey(Stems(u.Description))) {
				out = append(out, Lookalike{o.Name, u.Name})
			}
		}
	}
	return sortLookalikes(out)
}

// lookalikes fills in each tool's lookalikes among the index's, by their
// keys filed once.
func (ix *Index) lookalikes() {
	byName, byDescription := map[string][]int{}, map[string][]int{}
	for i, d := range ix.docs {
		if d.name != "" {
			byName[d.name] = append(byName[d.name], i)
		}
		if d.described != "" {
			byDescription[d.described] = append(byDescription[d.described], i)
		}
	}
	for i := range ix.docs {
		d := &ix.docs[i]
		var out []Lookalike
		for _, j := range append(slices.Clip(byName[d.name]), byDescription[d.described]...) {
			if o := &ix.docs[j]; o.server != d.server {
				out = append(out, Lookalike{o.server, o.tool.Name})
			}
		}
		d.alike = sortLookalikes(out)
	}
}
