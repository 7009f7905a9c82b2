// Package prompt builds the system prompt from the hub's catalog: who the
// assistant is, how to write a tool call, the core tools, every running
// MCP server's tools (their arguments in a terse form, see schema.go) and
// resources, and guidelines. For native tool calling, BuildNative is the
// variant that teaches no call syntax and lists no tools, and Functions gives
// the catalog as the functions sent beside it (native.go). Where more
// tools are connected than a model should read on every call,
// Options.Search lists only a core of them, each server with a line of
// what it is for, and teaches search_tools to find the others
// (search.go).
//
// The prompt is byte-stable: the same servers, tools and options give the
// same bytes, whatever order the catalog lists them in, so that providers'
// prefix caches hit across turns and users; so are the functions. It
// therefore holds no time, no user data and no catalog version.
package prompt

import (
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// Options add deployment-specific text to the prompt.
type Options struct {
	// Instructions from the operator, added under their own heading
	// before the guidelines. Empty adds nothing.
	Instructions string
	// Variant frames the prompt for a kind of model; "" is Generic.
	Variant mcpgram.PromptVariant
	// Search, when set, lists only the core tools it names and teaches
	// search_tools to find the others (see search.go); nil lists every
	// tool.
	Search *Search
}

// Build returns the system prompt for the running servers of cat.
func Build(cat mcpgram.Catalog) string {
	return BuildWith(cat, Options{})
}

// BuildVariant is Build framed for variant v.
func BuildVariant(cat mcpgram.Catalog, v mcpgram.PromptVariant) string {
	return BuildWith(cat, Options{Variant: v})
}

// BuildWith is Build with options.
func BuildWith(cat mcpgram.Catalog, opts Options) string {
	f := framingOf(opts.Variant)
	if opts.Search != nil {
		f = f.searching()
	}
	var b strings.Builder
	b.WriteString(f.intro)
	b.WriteString(f.format)
	b.WriteString(coreTools)
	if opts.Search != nil {
		b.WriteString(searchTool)
	}
	b.WriteString(f.examples)
	servers := runningServers(cat)
	if opts.Search != nil {
		writeSearchServers(&b, servers, opts.Search.Core)
	} else {
		writeServers(&b, servers)
	}
	writeUnavailable(&b, cat)
	writeMemoryAndInstructions(&b, servers, opts.Instructions)
	b.WriteString(f.guidelines)
	return b.String()
}

// runningServers returns copies of the running servers with everything
// sorted, so that the prompt does not depend on the catalog's order.
func runningServers(cat mcpgram.Catalog) []mcpgram.ServerInfo {
	var out []mcpgram.ServerInfo
	for _, s := range cat.Servers {
		if s.Status != mcpgram.StatusRunning {
			continue
		}
		s.Tools = slices.Clone(s.Tools)
		slices.SortStableFunc(s.Tools, func(a, b mcpgram.Tool) int { return strings.Compare(a.Name, b.Name) })
		s.Resources = slices.Clone(s.Resources)
		slices.SortStableFunc(s.Resources, func(a, b mcpgram.Resource) int { return strings.Compare(a.URI, b.URI) })
		s.ResourceTemplates = slices.Clone(s.ResourceTemplates)
		slices.SortStableFunc(s.ResourceTemplates, func(a, b mcpgram.ResourceTemplate) int {
			return strings.Compare(a.URITemplate, b.URITemplate)
		})
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// writeUnavailable names the servers that are set up but not running
// (still starting, restarting after a crash, failed), so that the model
// can say a request needs one that is down rather than that no such tool
// exists. Names only, without their state: the list then changes only
// when the running servers do, and with them the prompt anyway, so it
// costs providers' prefix caches nothing. The same in every variant.
func writeUnavailable(b *strings.Builder, cat mcpgram.Catalog) {
	var names []string
	for _, s := range cat.Servers {
		switch s.Status {
		case mcpgram.StatusStarting, mcpgram.StatusRestarting, mcpgram.StatusFailed:
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	b.WriteString("\nThese servers are set up but not available right now, so their tools are not listed: ")
	b.WriteString(strings.Join(names, ", "))
	b.WriteString(". If a request needs one of them, say that it is unavailable at the moment.\n")
}

func offersMemory(servers []mcpgram.ServerInfo) bool {
	for _, s := range servers {
		if _, ok := s.Tool("memory"); ok {
			return true
		}
	}
	return false
}

func offersTools(servers []mcpgram.ServerInfo) bool {
	for _, s := range servers {
		if len(s.Tools) > 0 {
			return true
		}
	}
	return false
}

func writeServers(b *strings.Builder, servers []mcpgram.ServerInfo) {
	b.WriteString("\n# MCP servers\n\n")
	if len(servers) == 0 {
		b.WriteString("No MCP server is connected right now, so there are no tools to use. Answer from your own knowledge, and say so when a tool would have been needed.\n")
		return
	}
	b.WriteString("These servers are connected. Use only the servers, tools and resources listed here, with the exact names shown.\n")
	if offersTools(servers) {
		b.WriteString(argumentsLegend)
	}
	for _, s := range servers {
		b.WriteString("\n## ")
		b.WriteString(s.Name)
		b.WriteString("\n")
		if len(s.Tools) > 0 {
			b.WriteString("\n### Tools\n")
			for _, t := range s.Tools {
				b.WriteString("- ")
				b.WriteString(t.Name)
				writeDescription(b, t.Description)
				writeInput(b, t)
			}
		}
		writeResources(b, s)
		if len(s.Tools) == 0 && len(s.Resources) == 0 && len(s.ResourceTemplates) == 0 {
			b.WriteString("\n(This server offers no tools or resources.)\n")
		}
	}
}

func writeNamed(b *strings.Builder, name, mime string) {
	var parts []string
	if name != "" {
		parts = append(parts, oneLine(name))
	}
	if mime != "" {
		parts = append(parts, oneLine(mime))
	}
	if len(parts) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(parts, ", "))
		b.WriteString(")")
	}
}

// writeDescription ends the current list line with the description, its
// later lines indented under the item so the list stays readable.
func writeDescription(b *strings.Builder, d string) {
	d = strings.TrimSpace(unifyLines(d))
	if d == "" {
		b.WriteString("\n")
		return
	}
	b.WriteString(": ")
	for i, line := range strings.Split(d, "\n") {
		if i > 0 {
			b.WriteString("    ")
		}
		b.WriteString(strings.TrimRight(line, " \t"))
		b.WriteString("\n")
	}
}

// oneLine folds s onto one line, every run of white space or line
// break one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(unifyLines(s)), " ")
}

// lineBreaks turns every character that ends a line somewhere into
// "\n": CR LF and CR (a terminal's and old Macs' breaks), the vertical tab
// and form feed, the information separators that Python's splitlines
// breaks at (U+001C-U+001E), NEL (U+0085) and Unicode's line and
// paragraph separators (U+2028, U+2029). A model's tokenizer or a reader
// may break at any of them; after this the prompt breaks lines at "\n"
// alone, and indents every line of a server's text under its item, so
// that none can start a section of its own.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\x1c", "\n", "\x1d", "\n", "\x1e", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// unifyLines is s with every line break "\n" (see lineBreaks).
func unifyLines(s string) string {
	return lineBreaks.Replace(s)
}

// writeResources lists a server's resources and resource templates, the
// same in every variant of the prompt.
func writeResources(b *strings.Builder, s mcpgram.ServerInfo) {
	if len(s.Resources) > 0 {
		b.WriteString("\n### Resources\n")
		for _, r := range s.Resources {
			b.WriteString("- ")
			b.WriteString(r.URI)
			writeNamed(b, r.Name, r.MIMEType)
			writeDescription(b, r.Description)
		}
	}
	if len(s.ResourceTemplates) > 0 {
		b.WriteString("\n### Resource templates\n")
		for _, r := range s.ResourceTemplates {
			b.WriteString("- ")
			b.WriteString(r.URITemplate)
			writeNamed(b, r.Name, r.MIMEType)
			writeDescription(b, r.Description)
		}
	}
}

// writeMemoryAndInstructions adds the advice on memory where a server
// offers one, and the operator's instructions, the same in every variant.
func writeMemoryAndInstructions(b *strings.Builder, servers []mcpgram.ServerInfo, instructions string) {
	if offersMemory(servers) {
		b.WriteString(memory)
	}
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString("\n# Instructions from the operator\n\n")
		b.WriteString(s)
		b.WriteString("\n")
	}
}
