// The native variant: for models called with OpenAI "tools", the tools
// travel as functions beside the prompt, so the prompt teaches no call
// syntax and lists no tools; it keeps the servers' resources, which no
// function schema says.

package prompt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
)

// A Function is one native function offered to the model.
type Function struct {
	// Name matches ^[a-zA-Z0-9_-]{1,64}$.
	Name        string
	Description string
	// Parameters is a JSON Schema of type object, compact, keys sorted.
	Parameters json.RawMessage
}

// A Target is what a function name stands for: an MCP server's tool, or
// one of the core actions (Server empty, Tool the core tool's name:
// toolcall.AccessMCPResource, AskFollowupQuestion, AttemptCompletion).
type Target struct {
	Server, Tool string
}

// A Toolset is the functions offered to a model and what each name
// stands for. Targets name every tool of the catalog, also those not
// offered (see FunctionsWith), so that a call by a tool's exact name
// resolves whether or not its function was offered.
type Toolset struct {
	Functions []Function
	Targets   map[string]Target

	// names is Targets the other way; all holds every tool's function,
	// for With.
	names map[Target]string
	all   map[Target]Function
}

// Target returns what name stands for.
func (ts *Toolset) Target(name string) (Target, bool) {
	t, ok := ts.Targets[name]
	return t, ok
}

// Name returns the function name of server's tool, "" when the catalog
// has none.
func (ts *Toolset) Name(server, tool string) string {
	return ts.names[Target{server, tool}]
}

// Function returns the function of server's tool, offered or not.
func (ts *Toolset) Function(server, tool string) (Function, bool) {
	f, ok := ts.all[Target{server, tool}]
	return f, ok
}

// Offers reports whether the function called name is offered.
func (ts *Toolset) Offers(name string) bool {
	return slices.ContainsFunc(ts.Functions, func(f Function) bool { return f.Name == name })
}

// With returns ts offering also the functions of tools (found by a
// search, or used recently), after its own, in the order given; tools
// already offered, or not in the catalog, are skipped. ts is unchanged.
func (ts *Toolset) With(tools []mcpgram.ToolRef) *Toolset {
	out := *ts
	out.Functions = slices.Clip(ts.Functions)
	for _, r := range tools {
		f, ok := ts.all[Target(r)]
		if ok && !out.Offers(f.Name) {
			out.Functions = append(out.Functions, f)
		}
	}
	return &out
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// maxName is the longest function name endpoints take.
const maxName = 64

// FunctionName is server's tool as a function name: server__tool, each
// character outside [a-zA-Z0-9_-] an underscore, cut to 64 bytes. Two
// tools may come out the same; Functions tells them apart.
func FunctionName(server, tool string) string {
	n := unsafeName.ReplaceAllString(server, "_") + "__" + unsafeName.ReplaceAllString(tool, "_")
	if len(n) > maxName {
		n = n[:maxName]
	}
	return n
}

// Functions returns the native functions for the running servers of cat: one
// per tool, named by FunctionName, and the core actions. Tools are taken
// in order of server and tool name, and a name already taken (by a core
// action or an earlier tool) gets the first free suffix _2, _3, ...; so
// the same catalog always gives the same names and bytes. Schemas are
// trimmed as the XML prompt trims them (see clean).
func Functions(cat mcpgram.Catalog) *Toolset {
	return FunctionsWith(cat, Options{})
}

// FunctionsWith is Functions with options. With opts.Search, only the
// core tools it names are offered, then the core actions with
// search_tools; the other tools keep their names (the same as Functions
// gives them) in Targets, and With offers them.
func FunctionsWith(cat mcpgram.Catalog, opts Options) *Toolset {
	ts := &Toolset{Targets: map[string]Target{}, names: map[Target]string{}, all: map[Target]Function{}}
	servers := runningServers(cat)
	core := coreFunctions(servers)
	if opts.Search != nil {
		core = append(core, searchFunction)
	}
	for _, f := range core {
		ts.Targets[f.Name] = Target{Tool: f.Name}
	}
	for _, s := range servers {
		for _, t := range s.Tools {
			name := FunctionName(s.Name, t.Name)
			for i := 2; ts.Targets[name] != (Target{}); i++ {
				suffix := fmt.Sprintf("_%d", i)
				name = FunctionName(s.Name, t.Name)
				name = name[:min(len(name), maxName-len(suffix))] + suffix
			}
			target := Target{Server: s.Name, Tool: t.Name}
			f := Function{
				Name:        name,
				Description: strings.TrimSpace(unifyLines(t.Description)),
				Parameters:  parameters(t),
			}
			ts.Targets[name], ts.names[target], ts.all[target] = target, name, f
			if opts.Search == nil || slices.Contains(opts.Search.Core, mcpgram.ToolRef(target)) {
				ts.Functions = append(ts.Functions, f)
			}
		}
	}
	ts.Functions = append(ts.Functions, core...)
	return ts
}

// parameters is t's input schema trimmed, as an object schema.
func parameters(t mcpgram.Tool) json.RawMessage {
	s, ok := decodeSchema(t.InputSchema)
	if !ok {
		return json.RawMessage(`{"type":"object"}`)
	}
	clean(s, t.Name, true)
	// clean drops the top level's type, which says nothing in the text
	// form; a function's parameters must say it.
	s["type"] = "object"
	return json.RawMessage(encode(s))
}

// coreFunctions are the core actions as functions. Reading resources is
// offered only where a server has some.
func coreFunctions(servers []mcpgram.ServerInfo) []Function {
	var out []Function
	if offersResources(servers) {
		out = append(out, Function{
			Name:        toolcall.AccessMCPResource,
			Description: "Reads a resource of a connected MCP server, such as a file, a record or live data. The resources are listed in the system prompt.",
			Parameters:  json.RawMessage(`{"properties":{"server_name":{"description":"The name of the server.","type":"string"},"uri":{"description":"The URI of the resource, or a resource template with its placeholders filled in.","type":"string"}},"required":["server_name","uri"],"type":"object"}`),
		})
	}
	return append(out,
		Function{
			Name:        toolcall.AskFollowupQuestion,
			Description: "Asks the user a question when you cannot go on without more information. The user sees the options as buttons and may also type any answer. This ends your turn; the answer comes in the user's next message.",
			Parameters:  json.RawMessage(`{"properties":{"options":{"description":"2 to 5 short answers the user can pick from.","items":{"type":"string"},"type":"array"},"question":{"description":"A clear, specific question.","type":"string"}},"required":["question"],"type":"object"}`),
		},
		Function{
			Name:        toolcall.AttemptCompletion,
			Description: "Gives the user your final answer once the task is done. This ends your turn, so use it only after every tool result you need has come back. A plain reply without function calls is taken as the final answer too.",
			Parameters:  json.RawMessage(`{"properties":{"result":{"description":"The answer for the user, in Markdown.","type":"string"}},"required":["result"],"type":"object"}`),
		})
}

func offersResources(servers []mcpgram.ServerInfo) bool {
	for _, s := range servers {
		if len(s.Resources) > 0 || len(s.ResourceTemplates) > 0 {
			return true
		}
	}
	return false
}

// BuildNative returns the system prompt for a model given Functions(cat) as
// native functions: no call syntax, no tool list; the servers by name
// with their resources.
func BuildNative(cat mcpgram.Catalog) string {
	return BuildNativeWith(cat, Options{})
}

// BuildNativeWith is BuildNative with options.
func BuildNativeWith(cat mcpgram.Catalog, opts Options) string {
	var b strings.Builder
	b.WriteString(nativeIntro)
	servers := runningServers(cat)
	if opts.Search != nil {
		writeNativeSearchServers(&b, servers)
	} else {
		writeNativeServers(&b, servers)
	}
	writeUnavailable(&b, cat)
	writeMemoryAndInstructions(&b, servers, opts.Instructions)
	b.WriteString(nativeGuidelines)
	return b.String()
}

// writeNativeSearchServers is writeNativeServers for a model offered
// only some tools as functions: each server with a line of what it is
// for, and how to find the tools not offered.
func writeNativeSearchServers(b *strings.Builder, servers []mcpgram.ServerInfo) {
	b.WriteString("\n# MCP servers\n\n")
	if len(servers) == 0 {
		b.WriteString("No MCP server is connected right now, so there are no tools to use. Answer from your own knowledge, and say so when a tool would have been needed.\n")
		return
	}
	fmt.Fprintf(b, "These servers are connected, with %d tools in all: too many to offer each as a function. Each tool of a server is a function named after the server and the tool, as server__tool; some are offered, and search_tools finds the others by what they do and adds them to your functions. When no function offered fits the task, search before you answer.\n", countTools(servers))
	for _, s := range servers {
		fmt.Fprintf(b, "\n## %s (%s)\n", s.Name, plural(len(s.Tools), "tool"))
		if a := about(s); a != "" {
			b.WriteString(a)
			b.WriteString("\n")
		}
		writeResources(b, s)
	}
}

func writeNativeServers(b *strings.Builder, servers []mcpgram.ServerInfo) {
	b.WriteString("\n# MCP servers\n\n")
	if len(servers) == 0 {
		b.WriteString("No MCP server is connected right now, so there are no tools to use. Answer from your own knowledge, and say so when a tool would have been needed.\n")
		return
	}
	b.WriteString("These servers are connected. Each tool of a server is a function named after the server and the tool, as server__tool.\n")
	for _, s := range servers {
		b.WriteString("\n## ")
		b.WriteString(s.Name)
		fmt.Fprintf(b, " (%d tools)\n", len(s.Tools))
		writeResources(b, s)
	}
}
