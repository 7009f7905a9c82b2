// Tool search. Past the threshold of the chat's profile
// (mcpgram.Profile.ToolSearch), a model call does not carry every tool: the
// prompt lists the servers, each with a line of what it is for, a core
// of tools (the operator's pins, and, after the shared part, the tools
// the chat used recently), and teaches search_tools; in native mode the
// same core goes as functions, beside search_tools. A search's result
// goes into the conversation like any tool's: in XML with each tool in
// full, in native mode as the names of functions that the turn's later
// calls then offer. The system prompt and the core functions keep their
// bytes from call to call, so providers' prefix caches keep hitting; a
// native call's functions grow only at their end, by what was found.
//
// A tool called by its exact name runs whether or not it was found
// first: the check and the approval are the same for every call.

package agent

import (
	"context"
	"slices"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

const (
	// recentRows is how many of the chat's last audit rows tell which
	// tools it used recently; recentTools how many of those a searching
	// model is shown in full.
	recentRows  = 50
	recentTools = 8
)

// A listing is what listing every tool of one catalog version costs,
// in one mode: how many tools, and their estimated tokens.
type listing struct {
	version       uint64
	tools, tokens int
}

// listingCost returns how many tools cat runs and what listing them all
// would take, in tokens, in the XML prompt or as native functions.
// It is computed once per catalog version and mode; a catalog a chat
// narrowed (own) each time.
func (a *Agent) listingCost(cat mcpgram.Catalog, native, own bool) (tools, tokens int) {
	if !own {
		a.promptMu.Lock()
		l, ok := a.listings[native]
		a.promptMu.Unlock()
		if ok && l.version == cat.Version {
			return l.tools, l.tokens
		}
	}
	for _, s := range cat.Running() {
		tools += len(s.Tools)
	}
	if native {
		for _, t := range a.toolset(cat, own, false).tools {
			tokens += estimate(t.Name) + estimate(t.Description) + estimate(string(t.Parameters))
		}
	} else {
		tokens = estimate(prompt.Tools(cat))
	}
	if !own {
		a.promptMu.Lock()
		a.listings[native] = listing{version: cat.Version, tools: tools, tokens: tokens}
		a.promptMu.Unlock()
	}
	return tools, tokens
}

// searching reports whether this call of the turn's model searches for
// its tools in cat instead of reading them all. A custom XML prompt
// (Options.SystemPrompt) lists what it lists: its calls never search.
func (t *turn) searching(cat mcpgram.Catalog, native bool) bool {
	if !native && t.a.cfg.SystemPrompt != nil {
		return false
	}
	tools, tokens := t.a.listingCost(cat, native, len(t.serversOff) > 0)
	return t.profile.ToolSearch.Searches(tools, tokens, t.profile.ContextTokens)
}

// pinned is the prompt's core: the operator's pinned tools.
func (a *Agent) pinned() *prompt.Search {
	return &prompt.Search{Core: a.cfg.PinnedTools}
}

// recent returns the tools the chat used recently, beyond the pinned
// ones, read once per turn: the same for each of its calls, so its
// prompt stays the same bytes.
func (t *turn) recent(ctx context.Context) []mcpgram.ToolRef {
	if t.recentRead {
		return t.recentRefs
	}
	t.recentRead = true
	refs, err := t.a.cfg.Store.RecentTools(ctx, t.caller.ChatID, recentRows)
	if err != nil {
		// Only the core shrinks: the model can still search.
		t.logger.Error("read the chat's recent tools", "err", err)
		return nil
	}
	for _, r := range refs {
		ref := mcpgram.ToolRef(r)
		if len(t.recentRefs) < recentTools && !slices.Contains(t.a.cfg.PinnedTools, ref) {
			t.recentRefs = append(t.recentRefs, ref)
		}
	}
	return t.recentRefs
}

// searchPrompt is the chat's part of a searching XML prompt: its recent
// tools in full.
func (t *turn) searchPrompt(ctx context.Context, cat mcpgram.Catalog) string {
	return prompt.ChatTools(cat, t.recent(ctx))
}

// searchTools returns the functions of a searching native call: the
// core, then the chat's recent tools, then those its searches found.
func (t *turn) searchTools(ctx context.Context, cat mcpgram.Catalog) *toolset {
	base := t.a.toolset(cat, len(t.serversOff) > 0, true)
	more := append(slices.Clip(t.recent(ctx)), t.loaded...)
	if len(more) == 0 {
		return base
	}
	set := base.set.With(more)
	ts := &toolset{version: base.version, set: set, tools: slices.Clip(base.tools)}
	for _, f := range set.Functions[len(base.set.Functions):] {
		ts.tools = append(ts.tools, llm.Tool{Name: f.Name, Description: f.Description, Parameters: f.Parameters})
	}
	return ts
}

// runSearches runs the searches of b that are to run, in order, before
// its calls: a search only reads the catalog, at once.
func (t *turn) runSearches(b *batch) {
	for i := range b.Calls {
		if bc := &b.Calls[i]; bc.Name == toolcall.SearchTools && bc.Text == "" && !bc.Waiting {
			t.runSearch(bc)
		}
	}
}

// runSearch runs one search and writes its result for the model: the tools
// found in full (XML), or the functions found, which the turn's later
// calls offer (native).
func (t *turn) runSearch(bc *batchCall) {
	cat := t.catalog()
	hits := t.a.exec.Search(cat, executor.Call{Name: toolcall.SearchTools, Query: bc.Query, Server: bc.Server})
	rec := store.Search{}
	m := t.a.cfg.Metrics
	m.Search(t.profile.Model, len(hits) > 0)
	found := make([]prompt.Found, len(hits))
	for i, h := range hits {
		ref := store.ToolRef{Server: h.Server, Tool: h.Tool.Name}
		rec.Found = append(rec.Found, ref)
		m.SearchFound(h.Server, h.Tool.Name)
		found[i] = prompt.Found{Server: h.Server, Tool: h.Tool}
		for _, l := range h.Lookalikes {
			found[i].Lookalikes = append(found[i].Lookalikes, mcpgram.ToolRef(l))
		}
		if t.tools == nil {
			continue
		}
		if _, ok := t.tools.set.Function(h.Server, h.Tool.Name); ok && !slices.Contains(t.loaded, mcpgram.ToolRef(ref)) {
			t.loaded = append(t.loaded, mcpgram.ToolRef(ref))
		}
	}
	t.searches = append(t.searches, rec)
	body := prompt.NothingFound()
	switch {
	case len(hits) > 0 && t.tools != nil:
		body = prompt.FoundFunctions(t.tools.set, found)
	case len(hits) > 0:
		body = prompt.FoundTools(found)
	}
	bc.Text, bc.OK = executor.Header(toolcall.SearchTools, bc.Server, bc.Query, true)+"\n"+body, true
	t.logger.Debug("tool search", "query", bc.Query, "server", bc.Server, "found", len(hits))
}

// followSearches notes, for each checked call of plan, the searches of
// the turn that found its tool: the model called what it found.
func (t *turn) followSearches(plan executor.Plan) {
	for _, s := range plan.Steps {
		if s.Err != nil || s.Call.Name != toolcall.UseMCPTool {
			continue
		}
		ref := store.ToolRef{Server: s.Call.Server, Tool: s.Call.Tool}
		found := false
		for i := range t.searches {
			sr := &t.searches[i]
			if slices.Contains(sr.Found, ref) {
				found = true
				if !slices.Contains(sr.Called, ref) {
					sr.Called = append(sr.Called, ref)
				}
			}
		}
		if found {
			t.a.cfg.Metrics.SearchCalled(ref.Server, ref.Tool)
		}
	}
}
