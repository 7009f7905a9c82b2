package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/mcpgram/mcpgram/toolcall"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// A Call is a checked block, ready to act on. Which fields are set depends
// on Name.
type Call struct {
	Name string // UseMCPTool, AccessMCPResource, AskFollowupQuestion or AttemptCompletion of toolcall

	Server string // UseMCPTool, AccessMCPResource
	Tool   string // UseMCPTool
	// Arguments are the decoded arguments (numbers as json.Number); never
	// nil for UseMCPTool.
	Arguments map[string]any
	// ArgumentsJSON is Arguments as compact JSON with sorted keys, for
	// approval requests and the audit log.
	ArgumentsJSON string
	URI           string // AccessMCPResource

	Question string   // AskFollowupQuestion
	Options  []string // AskFollowupQuestion; nil when none were given
	Result   string   // AttemptCompletion
	// Query is what to search for, for SearchTools; Server then limits
	// the search to one server ("": all).
	Query string

	// Block is the block the call was checked from.
	Block toolcall.Block
	// Repairs are the kinds of near miss repaired to make the call (the
	// Repair constants of this package and of toolcall), in a fixed
	// order; nil when it was written right.
	Repairs []string
}

// The kinds of repair the check makes besides those of the arguments
// (see toolcall.DecodeArguments), as recorded in Call.Repairs and
// Plan.Repairs.
const (
	RepairNameCase       = "name_case"       // server or tool name in the wrong case
	RepairNameJoined     = "name_joined"     // server__tool, server.tool or server/tool as the tool name
	RepairServerInferred = "server_inferred" // the one running server with the tool, server name empty or unknown
	RepairCutOff         = "cut_off"         // the reply ended inside the block, after all it needs
	RepairFenced         = "fenced"          // the reply was nothing but a call in a code fence
)

// A Problem names the kind of mistake a CheckError reports.
type Problem string

// The problems the check finds.
const (
	ProblemIncomplete     Problem = "incomplete"      // block cut off before its closing tag
	ProblemMissingParam   Problem = "missing_param"   // a required XML parameter is absent or empty
	ProblemUnknownServer  Problem = "unknown_server"  // no running server of that name
	ProblemUnknownTool    Problem = "unknown_tool"    // the server has no such tool
	ProblemAmbiguousTool  Problem = "ambiguous_tool"  // <mcp:tool> name found on several servers
	ProblemInvalidJSON    Problem = "invalid_json"    // arguments are not one JSON object
	ProblemSchema         Problem = "schema"          // arguments break the tool's input schema
	ProblemInvalidOptions Problem = "invalid_options" // options are not a JSON array of 2-5 strings
	ProblemUnknownBlock   Problem = "unknown_block"   // a block the executor does not run: a foreign call syntax (<tool_call>) or an unknown name
	ProblemMisformatted   Problem = "misformatted"    // checkText: a call in the text that is not a block
	ProblemThinkingCalls  Problem = "thinking_calls"  // no call in the reply, several different ones in its thinking
)

// A CheckError says why a block cannot be acted on. Its message is written
// for the model, so that it can correct the call.
type CheckError struct {
	Problem  Problem
	Feedback string
}

func (e *CheckError) Error() string { return e.Feedback }

// ProblemOf returns the kind of mistake err reports: its *CheckError's
// Problem, or "" when err is none.
func ProblemOf(err error) Problem {
	var ce *CheckError
	if errors.As(err, &ce) {
		return ce.Problem
	}
	return ""
}

func problem(p Problem, format string, args ...any) *CheckError {
	return &CheckError{Problem: p, Feedback: fmt.Sprintf(format, args...)}
}

// required lists, per core tool, the parameters that must be present and
// non-empty.
var required = map[string][]string{
	toolcall.UseMCPTool:          {"server_name", "tool_name"},
	toolcall.AccessMCPResource:   {"server_name", "uri"},
	toolcall.AskFollowupQuestion: {"question"},
	toolcall.AttemptCompletion:   {"result"},
	toolcall.SearchTools:         {"query"},
}

// usage shows each core tool's shape in feedback about a missing parameter.
var usage = map[string]string{
	toolcall.UseMCPTool:          "<use_mcp_tool>\n<server_name>server name</server_name>\n<tool_name>tool name</tool_name>\n<arguments>{JSON object}</arguments>\n</use_mcp_tool>",
	toolcall.AccessMCPResource:   "<access_mcp_resource>\n<server_name>server name</server_name>\n<uri>resource URI</uri>\n</access_mcp_resource>",
	toolcall.AskFollowupQuestion: "<ask_followup_question>\n<question>your question</question>\n<options>[\"Option 1\", \"Option 2\"]</options>\n</ask_followup_question>",
	toolcall.AttemptCompletion:   "<attempt_completion>\n<result>your answer</result>\n</attempt_completion>",
	toolcall.SearchTools:         "<search_tools>\n<query>what the tool should do</query>\n</search_tools>",
}

// NativeFeedback is feedback for a model that calls tools as native
// functions: the XML the check shows of the format is dropped, since such
// a model writes no tags (the feedback's "server__tool" names are its
// function names already).
func NativeFeedback(s string) string {
	for _, u := range usage {
		s = strings.ReplaceAll(s, ":\n"+u, ".")
	}
	return s
}

// A checker validates blocks against a catalog. It compiles each tool's
// input schema once per catalog version.
type checker struct {
	mu      sync.Mutex
	version uint64
	schemas map[string]compiledSchema // key: server + "\x00" + tool
}

// check turns b into a Call, or says what is wrong with it in a *CheckError.
// The near misses the parser read past to find b come first among the
// call's repairs.
func (c *checker) check(cat mcpgram.Catalog, b toolcall.Block) (Call, error) {
	call, err := c.checkBlock(cat, b)
	if err == nil && len(b.Repairs) > 0 {
		call.Repairs = append(slices.Clone(b.Repairs), call.Repairs...)
	}
	return call, err
}

func (c *checker) checkBlock(cat mcpgram.Catalog, b toolcall.Block) (Call, error) {
	call := Call{Name: b.Name, Block: b}
	switch {
	case b.Name == toolcall.ForeignJSON:
		return call, problem(ProblemUnknownBlock, "Your reply is a JSON object naming a tool, but not only {\"tool\": NAME, \"params\": {JSON object}}, so nothing was called. Call the tools of MCP servers with use_mcp_tool:\n%s", usage[toolcall.UseMCPTool])
	case toolcall.Foreign(b.Name):
		return call, problem(ProblemUnknownBlock, "The <%s> format is not one this bot runs, so nothing was called. Call the tools of MCP servers with use_mcp_tool:\n%s", b.Name, usage[toolcall.UseMCPTool])
	}
	if _, known := required[b.Name]; !known {
		return call, problem(ProblemUnknownBlock, "Unknown tool block <%s>. Use one of: use_mcp_tool, access_mcp_resource, ask_followup_question, attempt_completion.", clean(b.Name))
	}
	if !b.Complete {
		if !cutOffRunnable(b) {
			return call, cutOff(b, nil)
		}
		call, err := c.checkWhole(cat, b, call, []string{RepairCutOff})
		if err != nil {
			// What is wrong may be only what the end of the reply cut.
			return call, cutOff(b, err)
		}
		return call, nil
	}
	return c.checkWhole(cat, b, call, nil)
}

// cutOff is the feedback for a block cut off by the end of the reply,
// with what its check found, if anything.
func cutOff(b toolcall.Block, err error) *CheckError {
	ce := problem(ProblemIncomplete, "The %s block was cut off before its closing tag %s. Write the whole block again and close every tag.", b.Name, b.Closing())
	if err != nil {
		ce.Feedback += "\n" + err.Error()
	}
	return ce
}

// checkWhole checks a block that is complete, or cut off with all it
// needs, after the repairs so far.
func (c *checker) checkWhole(cat mcpgram.Catalog, b toolcall.Block, call Call, repairs []string) (Call, error) {
	if b.Dialect != "" {
		return c.checkDialect(cat, b, call)
	}
	for _, name := range required[b.Name] {
		// A call without its server may name a tool only one server has.
		if b.Params[name] == "" && (b.Name != toolcall.UseMCPTool || name != "server_name") {
			return call, problem(ProblemMissingParam, "Missing value for required parameter '%s'. Retry with the complete block:\n%s", name, usage[b.Name])
		}
	}
	switch b.Name {
	case toolcall.UseMCPTool:
		return c.checkUse(cat, b, call, repairs)
	case toolcall.AccessMCPResource:
		server, kinds, found, cerr := namedServer(cat, b.Params["server_name"])
		if !found && cerr == nil {
			_, cerr = runningServer(cat, b.Params["server_name"])
		}
		if cerr != nil {
			return call, cerr
		}
		call.Server, call.URI = server.Name, b.Params["uri"]
		call.Repairs = append(repairs, kinds...)
		return call, nil
	case toolcall.SearchTools:
		call.Query = b.Params["query"]
		if name := b.Params["server_name"]; name != "" {
			server, kinds, found, cerr := namedServer(cat, name)
			if !found && cerr == nil {
				_, cerr = runningServer(cat, name)
			}
			if cerr != nil {
				return call, cerr
			}
			call.Server = server.Name
			call.Repairs = append(repairs, kinds...)
		}
		return call, nil
	case toolcall.AskFollowupQuestion:
		call.Question = b.Params["question"]
		if raw, ok := b.Params["options"]; ok && raw != "" {
			opts, err := parseOptions(raw)
			if err != nil {
				return call, err
			}
			call.Options = opts
		}
		return call, nil
	default: // AttemptCompletion
		call.Result = b.Params["result"]
		return call, nil
	}
}

// checkUse resolves a use_mcp_tool block's server and tool and checks its
// arguments, repairing near misses.
func (c *checker) checkUse(cat mcpgram.Catalog, b toolcall.Block, call Call, repairs []string) (Call, error) {
	m, cerr := resolveTool(cat, b.Params["server_name"], b.Params["tool_name"])
	if cerr != nil {
		return call, cerr
	}
	t, ok := m.server.Tool(m.tool)
	if !ok { // a server still starting: see toolOn
		t = mcpgram.Tool{Name: m.tool}
	}
	raw, given := b.Params["arguments"]
	whole := true
	if !given && b.Complete {
		// Elements written straight into the block, <path>/x</path>,
		// are the arguments without their wrapper: never run as {}.
		if s := strayElements(b); strings.HasPrefix(s, "<") {
			raw = s
		}
	}
	if b.OpenParam == "arguments" {
		// The reply ended inside the arguments: only JSON that closes
		// itself shows they were whole.
		raw, whole = trimPartialTag(raw, "</arguments>"), false
	}
	call, err := c.checkArguments(cat.Version, m.server, t, raw, whole, call)
	call.Repairs = append(append(repairs, m.kinds...), call.Repairs...)
	return call, err
}

// checkDialect resolves the tool a dialect's block names, "server__tool"
// or a bare tool name, to exactly one running server's tool.
func (c *checker) checkDialect(cat mcpgram.Catalog, b toolcall.Block, call Call) (Call, error) {
	name := b.Params["tool_name"]
	if name == "" {
		return call, problem(ProblemMissingParam, "The <mcp:tool> block has no \"name: TOOL\" line. Prefer the standard format:\n%s", usage[toolcall.UseMCPTool])
	}
	type match struct {
		server mcpgram.ServerInfo
		tool   mcpgram.Tool
	}
	var matches []match
	for _, s := range cat.Running() {
		if rest, ok := strings.CutPrefix(name, s.Name+"__"); ok {
			if t, ok := s.Tool(rest); ok {
				matches = append(matches, match{s, t})
				continue
			}
		}
		if t, ok := s.Tool(name); ok {
			matches = append(matches, match{s, t})
		}
	}
	switch len(matches) {
	case 1:
		return c.checkArguments(cat.Version, matches[0].server, matches[0].tool, b.Params["arguments"], true, call)
	case 0:
		var all []string
		for _, s := range cat.Running() {
			for _, t := range s.Tools {
				all = append(all, clean(s.Name+"__"+t.Name))
			}
		}
		msg := fmt.Sprintf("No running server has a tool %q.", clean(name))
		if best, ok := suggest.Closest(name, all); ok {
			msg += fmt.Sprintf(" Did you mean %q?", best)
		}
		if len(all) > 0 {
			msg += " Tools: " + listNames(all) + "."
		}
		msg += " Prefer the standard format:\n" + usage[toolcall.UseMCPTool]
		return call, problem(ProblemUnknownTool, "%s", msg)
	default:
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = clean(m.server.Name + "__" + m.tool.Name)
		}
		return call, problem(ProblemAmbiguousTool, "Several servers have a tool %q: %s. Name the server with use_mcp_tool:\n%s", clean(name), strings.Join(names, ", "), usage[toolcall.UseMCPTool])
	}
}

// runningServer returns the named server if it is running or on its way
// up (a call to it waits for it), or says why not.
func runningServer(cat mcpgram.Catalog, name string) (mcpgram.ServerInfo, *CheckError) {
	running := cat.Running()
	names := make([]string, len(running))
	for i, s := range running {
		names[i] = s.Name
	}
	if s, ok := cat.Server(name); ok && (s.Status == mcpgram.StatusRunning || s.Coming()) {
		return s, nil
	}
	var b strings.Builder
	if s, ok := cat.Server(name); ok {
		// The reason stays out: it can quote a server's stderr or a URL
		// with credentials, and the model may repeat it to anyone.
		fmt.Fprintf(&b, "Server %q is not running (%s).", s.Name, s.Status)
	} else {
		fmt.Fprintf(&b, "There is no server %q.", clean(name))
		if best, ok := suggest.Closest(name, names); ok {
			fmt.Fprintf(&b, " Did you mean %q?", best)
		}
	}
	if len(names) == 0 {
		b.WriteString(" No MCP server is running, so no tool can be used now.")
	} else {
		fmt.Fprintf(&b, " Running servers: %s.", strings.Join(names, ", "))
	}
	return mcpgram.ServerInfo{}, problem(ProblemUnknownServer, "%s", b.String())
}

// serversWithTool returns the quoted names of the running servers that
// offer a tool of that name.
func serversWithTool(cat mcpgram.Catalog, name string) []string {
	var out []string
	for _, s := range cat.Running() {
		if _, ok := s.Tool(name); ok {
			out = append(out, fmt.Sprintf("%q", s.Name))
		}
	}
	return out
}

func findTool(cat mcpgram.Catalog, s mcpgram.ServerInfo, name string) (mcpgram.Tool, error) {
	if t, ok := s.Tool(name); ok {
		return t, nil
	}
	names := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		names[i] = clean(t.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Server %q has no tool %q", s.Name, clean(name))
	if best, ok := suggest.Closest(name, names); ok {
		fmt.Fprintf(&b, "; did you mean %q?", best)
	} else {
		b.WriteString(".")
	}
	if elsewhere := serversWithTool(cat, name); len(elsewhere) > 0 {
		fmt.Fprintf(&b, " A tool of that name is on server %s.", strings.Join(elsewhere, ", "))
	}
	if len(names) == 0 {
		fmt.Fprintf(&b, " Server %q offers no tools.", s.Name)
	} else {
		fmt.Fprintf(&b, " Its tools: %s.", listNames(names))
	}
	return mcpgram.Tool{}, problem(ProblemUnknownTool, "%s", b.String())
}

var printer = message.NewPrinter(language.English)

func dedup(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// strayElements returns what a use_mcp_tool block holds besides its
// server_name and tool_name elements and its own tags.
func strayElements(b toolcall.Block) string {
	s := strings.TrimSuffix(strings.TrimPrefix(b.Raw, "<"+b.Name+">"), "</"+b.Name+">")
	for _, name := range []string{"server_name", "tool_name"} {
		open, end := "<"+name+">", "</"+name+">"
		i := strings.Index(s, open)
		if i < 0 {
			continue
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			return ""
		}
		s = s[:i] + s[i+j+len(end):]
	}
	return strings.TrimSpace(s)
}

// trimPartialTag cuts from s the start of tag that a reply cut off left
// at its end.
func trimPartialTag(s, tag string) string {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return strings.TrimSpace(s[:len(s)-n])
		}
	}
	return s
}

// cutOffRunnable reports whether b, cut off by the end of the reply, has
// all it needs: a tool call whose parameters were all closed or whose
// arguments were the last thing written (repairArguments then asks them
// to be whole), or a resource read whose URI was closed.
func cutOffRunnable(b toolcall.Block) bool {
	if b.Complete || b.Dialect != "" {
		return false
	}
	switch b.Name {
	case toolcall.UseMCPTool:
		_, args := b.Params["arguments"]
		return args && (b.OpenParam == "" || b.OpenParam == "arguments")
	case toolcall.AccessMCPResource:
		return b.OpenParam == "" && b.Params["uri"] != ""
	}
	return false
}

// parseOptions reads the options of a follow-up question.
func parseOptions(raw string) ([]string, error) {
	var opts []any
	if err := json.Unmarshal([]byte(toolcall.Unfence(raw)), &opts); err != nil {
		return nil, problem(ProblemInvalidOptions, "The options are not a JSON array of strings (%v). Write them like [\"Option 1\", \"Option 2\"] with 2 to 5 options, or leave <options> out.", err)
	}
	if len(opts) < 2 || len(opts) > 5 {
		return nil, problem(ProblemInvalidOptions, "The options must be 2 to 5 strings; got %d. Write them like [\"Option 1\", \"Option 2\"], or leave <options> out.", len(opts))
	}
	out := make([]string, len(opts))
	for i, o := range opts {
		s, ok := o.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, problem(ProblemInvalidOptions, "Option %d is not a non-empty string. Write the options like [\"Option 1\", \"Option 2\"].", i+1)
		}
		out[i] = strings.TrimSpace(s)
	}
	return out, nil
}

// maxListed is how many names feedback lists: a server, or a set-up, may
// have hundreds of tools, and feedback goes into the model's context.
const maxListed = 30

// listNames joins names for feedback, at most maxListed of them.
func listNames(names []string) string {
	if len(names) <= maxListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
}

// stableJSON re-encodes JSON with sorted keys and no space, so the same
// schema always prints the same bytes.
func stableJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// clean makes a model-written name safe to quote in feedback: no control
// characters, at most 100 bytes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 100 {
		s = strings.ToValidUTF8(s[:100], "") + "…"
	}
	return s
}
