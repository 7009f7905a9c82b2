// The prompt of a set-up with more tools than a model should read on
// every call: the servers, each with a line of what it is for, a core of
// tools in full, and search_tools, which finds the others. What a search
// finds goes into the conversation (FoundTools, FoundFunctions), never
// into the system prompt, so the prompt keeps its bytes from call to call
// and providers' prefix caches keep hitting.

package prompt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// A Search makes a prompt list only some tools, and teach search_tools
// to find the others.
type Search struct {
	// Core are the tools listed in full (the operator's pins), in any
	// order; those of servers not running are left out.
	Core []mcpgram.ToolRef
}

// searching is f for a prompt that lists only some tools: five core
// tools, an example of a search, and guidelines that point to it.
func (f framing) searching() framing {
	f.format = strings.Replace(f.format, "four", "five", 1)
	f.examples += searchExample
	for _, g := range searchGuidelines {
		f.guidelines = strings.Replace(f.guidelines, g[0], g[1], 1)
	}
	return f
}

// searchTool is the fifth core tool, taught after the other four.
const searchTool = `
## search_tools
Finds tools of the connected MCP servers that are not listed in this prompt, by what you want to do. It returns the tools that fit best, with their arguments; call one with use_mcp_tool. A tool you already know the exact name of needs no search.
Parameters:
- query (required): what you want to do, in plain words, such as "send a message to a Slack channel".
- server_name (optional): search only this server's tools.
Usage:
<search_tools>
<query>what you want to do</query>
</search_tools>
`

const searchExample = `
Example 5: finding a tool that is not listed

<search_tools>
<query>weather forecast for a city</query>
</search_tools>
`

// searchGuidelines replace, in each variant's guidelines, the line on
// picking a tool.
var searchGuidelines = [][2]string{
	{"- Pick the tool that fits the task from the list above, and read its description and arguments before calling it.",
		"- Pick the tool that fits the task from the list above; when none does, find one with search_tools. Read its description and arguments before calling it."},
	{"1. Use only the servers and tools listed above, with their exact names.",
		"1. Use only the servers and tools listed above or found with search_tools, with their exact names. If no tool listed fits, search first."},
	{"- Choose the tool whose description and arguments fit the task.",
		"- Choose the tool whose description and arguments fit the task; search_tools finds the tools not listed."},
}

// coreOf returns the tools of s that refs name, in name order.
func coreOf(s mcpgram.ServerInfo, refs []mcpgram.ToolRef) []mcpgram.Tool {
	var out []mcpgram.Tool
	for _, t := range s.Tools {
		if slices.Contains(refs, mcpgram.ToolRef{Server: s.Name, Tool: t.Name}) {
			out = append(out, t)
		}
	}
	return out
}

// maxTopics is how many words sum up a server that says nothing of
// itself.
const maxTopics = 5

// about is a line of what s is for: what it says of itself, or else the
// words its tools' names use most.
func about(s mcpgram.ServerInfo) string {
	if d := oneLine(s.Description); d != "" {
		return d
	}
	if topics := toolsearch.Topics(s.Tools, maxTopics); len(topics) > 0 {
		return "Its tools are about: " + strings.Join(topics, ", ") + "."
	}
	return ""
}

func countTools(servers []mcpgram.ServerInfo) int {
	n := 0
	for _, s := range servers {
		n += len(s.Tools)
	}
	return n
}

// writeSearchServers is writeServers for a prompt that lists only the
// core tools: every server with its count of tools and a line of what it
// is for, its core tools in full, its resources.
func writeSearchServers(b *strings.Builder, servers []mcpgram.ServerInfo, core []mcpgram.ToolRef) {
	b.WriteString("\n# MCP servers\n\n")
	if len(servers) == 0 {
		b.WriteString("No MCP server is connected right now, so there are no tools to use. Answer from your own knowledge, and say so when a tool would have been needed.\n")
		return
	}
	fmt.Fprintf(b, "These servers are connected, with %d tools in all: too many to list here. Each server says what it is for; some tools are listed in full, and search_tools finds the others by what they do. Use only the servers, tools and resources listed here or found by a search, with the exact names shown.\n", countTools(servers))
	b.WriteString(argumentsLegend)
	for _, s := range servers {
		fmt.Fprintf(b, "\n## %s (%s)\n", s.Name, plural(len(s.Tools), "tool"))
		if a := about(s); a != "" {
			b.WriteString(a)
			b.WriteString("\n")
		}
		if tools := coreOf(s, core); len(tools) > 0 {
			b.WriteString("\n### Tools\n")
			writeTools(b, tools)
		}
		writeResources(b, s)
	}
}

func writeTools(b *strings.Builder, tools []mcpgram.Tool) {
	for _, t := range tools {
		b.WriteString("- ")
		b.WriteString(t.Name)
		writeDescription(b, t.Description)
		writeInput(b, t)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ChatTools is the part of the prompt that lists, in full, tools one chat
// used recently (refs), for a prompt that lists only some tools: it goes
// after the shared prompt, whose bytes stay the same for every chat. ""
// when none of them runs in cat.
func ChatTools(cat mcpgram.Catalog, refs []mcpgram.ToolRef) string {
	var b strings.Builder
	for _, s := range runningServers(cat) {
		tools := coreOf(s, refs)
		if len(tools) == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n\n====\n\nTOOLS THIS CHAT USED RECENTLY\n\nThese tools are listed in full; call them with use_mcp_tool like any other.\n")
		}
		fmt.Fprintf(&b, "\n## %s\n", s.Name)
		writeTools(&b, tools)
	}
	return b.String()
}

// A Found is a tool a search found.
type Found struct {
	Server string
	Tool   mcpgram.Tool
	// Lookalikes are the tools of other servers that look like Tool
	// (toolsearch.Lookalike), by server and name: the result names them
	// beside it, so that the model tells them apart by server.
	Lookalikes []mcpgram.ToolRef
}

// lookalikeNote ends a result's first line when a tool found has
// lookalikes.
const lookalikeNote = ` A tool marked "also offered by" has a namesake or a copy of its wording on another server: pick by the server the request is about, not by the wording.`

// FoundTools is the result of a search_tools call for a model that calls
// tools in XML: the tools found, best first, grouped by server, each in
// full as the prompt lists tools, with its server and lookalikes beside
// its name. found must not be empty.
func FoundTools(found []Found) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Found %s. Call one with use_mcp_tool, with the server and tool names shown.", plural(len(found), "tool"))
	if anyLookalike(found) {
		b.WriteString(lookalikeNote)
	}
	b.WriteString("\n")
	var order []string
	for _, f := range found {
		if !slices.Contains(order, f.Server) {
			order = append(order, f.Server)
		}
	}
	for _, server := range order {
		fmt.Fprintf(&b, "\n## %s\n", server)
		for _, f := range found {
			if f.Server != server {
				continue
			}
			b.WriteString("- " + f.Tool.Name)
			writeOrigin(&b, f, func(r mcpgram.ToolRef) string { return r.Tool })
			writeDescription(&b, f.Tool.Description)
			writeInput(&b, f.Tool)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeOrigin writes, after a found tool's name, its server and the
// lookalikes of other servers, each by server and, where it is not the
// found tool's, by the name the model calls it by (name).
func writeOrigin(b *strings.Builder, f Found, name func(mcpgram.ToolRef) string) {
	fmt.Fprintf(b, " (server %s", f.Server)
	for i, l := range f.Lookalikes {
		if i == 0 {
			b.WriteString("; also offered by")
		} else {
			b.WriteString(", and by")
		}
		fmt.Fprintf(b, " server %s", l.Server)
		if n := name(l); n != "" && n != name(mcpgram.ToolRef{Server: f.Server, Tool: f.Tool.Name}) {
			fmt.Fprintf(b, " as %s", n)
		}
	}
	b.WriteString(")")
}

func anyLookalike(found []Found) bool {
	return slices.ContainsFunc(found, func(f Found) bool { return len(f.Lookalikes) > 0 })
}

// FoundFunctions is the result of a search_tools call for a model that
// calls tools as functions: the functions of ts that it found, now
// offered, each with its server, its lookalikes (by function name) and
// its description's first line. found must hold one tool of ts at least.
func FoundFunctions(ts *Toolset, found []Found) string {
	var b strings.Builder
	var listed int
	for _, f := range found {
		fn, ok := ts.Function(f.Server, f.Tool.Name)
		if !ok {
			continue
		}
		listed++
		b.WriteString("\n- " + fn.Name)
		writeOrigin(&b, f, func(r mcpgram.ToolRef) string { return ts.Name(r.Server, r.Tool) })
		if d := firstLine(fn.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	head := fmt.Sprintf("Found %s, now among your functions:", plural(listed, "tool"))
	if anyLookalike(found) {
		head = fmt.Sprintf("Found %s, now among your functions.%s", plural(listed, "tool"), lookalikeNote)
	}
	return head + b.String()
}

// NothingFound is the result of a search_tools call that found nothing.
func NothingFound() string {
	return "No tool matches. Search again with other words: what the tool would do, or the service it belongs to. If no server offers such a tool, tell the user."
}

// maxLine bounds a description's line in a search's result.
const maxLine = 200

func firstLine(s string) string {
	s = strings.TrimSpace(unifyLines(s))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > maxLine {
		cut := maxLine
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// searchFunction is search_tools as a native function.
var searchFunction = Function{
	Name:        toolcall.SearchTools,
	Description: "Finds tools of the connected MCP servers that are not among your functions yet, by what you want to do. The tools found are added to your functions for the rest of this request. A tool whose exact function name you already know needs no search.",
	Parameters:  []byte(`{"properties":{"query":{"description":"What you want to do, in plain words, such as \"send a message to a Slack channel\".","type":"string"},"server_name":{"description":"Search only this server's tools.","type":"string"}},"required":["query"],"type":"object"}`),
}
