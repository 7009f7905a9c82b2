// Tool search: the search_tools calls of a model that is shown only some
// of the tools, and the tools suggested to it when it names one the
// catalog does not have.

package executor

import (
	"fmt"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// maxViews bounds the indexes kept for one catalog version: one per set
// of running servers seen (chats may turn servers off for themselves).
const maxViews = 16

// indexes keeps the search indexes of the current catalog version, by
// the servers they cover.
type indexes struct {
	mu      sync.Mutex
	version uint64
	views   map[string]*toolsearch.Index
}

// index returns the search index of cat's running tools, built once per
// catalog version and set of running servers.
func (x *indexes) index(cat mcpgram.Catalog) *toolsearch.Index {
	var key strings.Builder
	for _, s := range cat.Running() {
		fmt.Fprintf(&key, "%s\x00%d\x00", s.Name, len(s.Tools))
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.views == nil || x.version != cat.Version || len(x.views) >= maxViews {
		x.views, x.version = map[string]*toolsearch.Index{}, cat.Version
	}
	ix, ok := x.views[key.String()]
	if !ok {
		ix = toolsearch.New(cat)
		x.views[key.String()] = ix
	}
	return ix
}

// SearchLimit is how many tools a search_tools call returns at most.
const SearchLimit = toolsearch.DefaultLimit

// Search returns the tools of cat's running servers that the
// search_tools call c finds, best first, at most SearchLimit.
func (e *Executor) Search(cat mcpgram.Catalog, c Call) []toolsearch.Hit {
	return e.indexes.index(cat).Search(toolsearch.Query{Text: c.Query, Server: c.Server, Limit: SearchLimit})
}

// maxSuggested is how many tools feedback on an unknown tool suggests.
const maxSuggested = 3

// suggest adds to the feedback of a call of a tool the catalog does not
// have the tools that a search for its name finds, so that a model that
// misremembers a name it was never shown gets what it probably meant.
func (e *Executor) suggest(cat mcpgram.Catalog, b toolcall.Block, err error) error {
	ce, ok := err.(*CheckError)
	if !ok || b.Name != toolcall.UseMCPTool {
		return err
	}
	switch ce.Problem {
	case ProblemUnknownTool, ProblemUnknownServer:
	default:
		return err
	}
	query := b.Params["tool_name"]
	if query == "" {
		return err
	}
	hits := e.indexes.index(cat).Search(toolsearch.Query{Text: b.Params["server_name"] + " " + query, Limit: maxSuggested})
	out := *ce
	if len(hits) == 0 {
		out.Feedback += " No tool matches that name; search_tools finds tools by what they do."
		return &out
	}
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = fmt.Sprintf("%s (tool %q on server %q)", clean(h.Server+"__"+h.Tool.Name), clean(h.Tool.Name), clean(h.Server))
	}
	out.Feedback += " Tools whose names or descriptions match it: " + strings.Join(names, ", ") + ". If none is the one you need, use search_tools."
	return &out
}
