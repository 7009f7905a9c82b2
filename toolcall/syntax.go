// The one definition of the tool-call syntax: the tags the
// parser takes outside a block, what each opens, and the parameters inside
// the core tools. The parser and Visible (what users may see of a reply)
// both read it, so a tag cannot be known to one and leak through the other.

package toolcall

import (
	"slices"
	"strings"
)

// The core tools a model may call, named as Cline names them.
const (
	UseMCPTool          = "use_mcp_tool"
	AccessMCPResource   = "access_mcp_resource"
	AskFollowupQuestion = "ask_followup_question"
	AttemptCompletion   = "attempt_completion"
)

// The dialects: other ways to write a call to an MCP server's tool that
// the parser reads as a use_mcp_tool Block, with Dialect set. Such a
// block names its tool in tool_name ("server__tool" or a bare name) and
// has no server_name; the executor's check resolves it.
const (
	// DialectMCPTool is the fallback <mcp:tool> block: "name: TOOL" and
	// "parameters: {JSON}" lines.
	DialectMCPTool = "mcp:tool"
	// DialectToolCall is <tool_call>{"name": …, "arguments": {…}}</tool_call>,
	// as the Hermes and Qwen families write calls.
	DialectToolCall = "tool_call"
	// DialectFunction is <tool_call><function=NAME><parameter=KEY>VALUE
	// </parameter></function></tool_call>, as Qwen's coder models write
	// them: each value raw text, typed by the tool's schema.
	DialectFunction = "function"
	// DialectJSON is a reply whose whole content is {"tool": …,
	// "params": {…}}, the seed MCP host's form (or {"name": …,
	// "arguments": {…}}, a <tool_call>'s body without its tags).
	DialectJSON = "json"
)

// Call syntaxes of other model families that mcpgram does not run: a
// <tool_call> whose body is neither of its dialects, Anthropic's former
// <function_calls>, and a JSON call that is not DialectJSON. A model trained on them may still write them;
// the parser reads them as blocks of that name without parameters, which
// the check answers with feedback asking for use_mcp_tool, so that they
// never reach users as text.
const (
	ForeignToolCall      = "tool_call"      // a <tool_call> that is neither DialectToolCall nor DialectFunction
	ForeignFunctionCalls = "function_calls" // Anthropic's former format: <function_calls><invoke …>
	// ForeignJSON is a reply whose whole content is a JSON object that
	// names a tool and its arguments but is not DialectJSON: it has other
	// keys, or one twice.
	ForeignJSON = "json"
)

// A tagKind says what the parser does with a tag met in visible text.
type tagKind int

const (
	kindTool    tagKind = iota // a core tool block, its parameters in toolParams
	kindDialect                // a block read whole, then by readDialect
	kindForeign                // another family's call syntax: a block without parameters
	kindThink                  // thinking: hidden from users, kept for logs
)

// outerTags are the tags recognised outside any block, in the order tried.
var outerTags = []struct {
	name string
	kind tagKind
}{
	{UseMCPTool, kindTool},
	{AccessMCPResource, kindTool},
	{AskFollowupQuestion, kindTool},
	{AttemptCompletion, kindTool},
	{DialectMCPTool, kindDialect},
	{"tool_call", kindDialect},
	{ForeignFunctionCalls, kindForeign},
	{"thinking", kindThink},
	{"think", kindThink},
}

// toolParams lists, per core tool, the parameter tags the parser
// recognises inside it. Other tags inside a block are ignored.
var toolParams = map[string][]paramTag{
	UseMCPTool:          tags(false, "server_name", "tool_name", "arguments"),
	AccessMCPResource:   tags(false, "server_name", "uri"),
	AskFollowupQuestion: tags(false, "question", "options"),
	AttemptCompletion:   tags(false, "result"),
}

// escapedParams is toolParams HTML-escaped, for a block whose tags are.
var escapedParams = func() map[string][]paramTag {
	out := map[string][]paramTag{}
	for name, ps := range toolParams {
		for _, p := range ps {
			out[name] = append(out[name], tags(true, p.name)...)
		}
	}
	return out
}()

// A paramTag is a parameter's name with its tags, built once.
type paramTag struct{ name, open, close string }

func tags(escaped bool, names ...string) []paramTag {
	out := make([]paramTag, len(names))
	for i, n := range names {
		out[i] = paramTag{n, openTag(n, escaped), closeTag(n, escaped)}
	}
	return out
}

// Tags are written "<name>", or "&lt;name&gt;" by a model, or a proxy,
// that escapes its markup as HTML. A block opened by an escaped tag is
// read with escaped tags throughout, and its values unescaped.
const (
	ltEsc = "&lt;"
	gtEsc = "&gt;"
)

func openTag(name string, escaped bool) string {
	if escaped {
		return ltEsc + name + gtEsc
	}
	return "<" + name + ">"
}

func closeTag(name string, escaped bool) string { return openTag("/"+name, escaped) }

// tagName reads a tag of a tagSet: its name ("/think" for a closing one)
// and whether it is escaped.
func tagName(tag string) (name string, escaped bool) {
	if s, ok := strings.CutPrefix(tag, ltEsc); ok {
		return strings.TrimSuffix(s, gtEsc), true
	}
	return tag[1 : len(tag)-1], false
}

// A tagSet is the tags the parser takes in visible text: all of them,
// and split by the byte they start with, '<' or '&' (escaped), each part
// with the bytes that may follow its opening ("<" or "&lt;"), so that
// text scans past any other '<' or '&' at once.
type tagSet struct {
	tags         []string
	raw, escaped tagList
}

// A tagList is tags that all open with one prefix, and the bytes that
// may follow it.
type tagList struct {
	open   string // "<" or "&lt;"
	tags   []string
	starts string
}

func newTagSet(tags []string) *tagSet {
	set := &tagSet{tags: tags, raw: tagList{open: "<"}, escaped: tagList{open: ltEsc}}
	for _, t := range tags {
		l := &set.raw
		if strings.HasPrefix(t, ltEsc) {
			l = &set.escaped
		}
		l.tags = append(l.tags, t)
		if c := t[len(l.open)]; strings.IndexByte(l.starts, c) < 0 {
			l.starts += string(c)
		}
	}
	return set
}

// list returns the tags that s, which starts with '<' or '&', may start,
// or nil when its first bytes rule every tag out.
func (set *tagSet) list(s string) *tagList {
	l := &set.raw
	if s[0] == '&' {
		l = &set.escaped
	}
	n := len(l.open)
	switch {
	case len(s) <= n:
		if !strings.HasPrefix(l.open, s) {
			return nil
		}
	case !strings.HasPrefix(s, l.open) || strings.IndexByte(l.starts, s[n]) < 0:
		return nil
	}
	return l
}

// bothForms returns each tag of names as written and HTML-escaped.
func bothForms(names []string, closing bool) []string {
	var out []string
	for _, escaped := range []bool{false, true} {
		for _, n := range names {
			if closing {
				out = append(out, closeTag(n, escaped))
			} else {
				out = append(out, openTag(n, escaped))
			}
		}
	}
	return out
}

// textTags are outerTags as written, and the closing tags of thinking,
// which the parser also takes alone (see strayThinkEnd), each also
// HTML-escaped.
var textTags = newTagSet(func() []string {
	var names, thinking []string
	for _, t := range outerTags {
		names = append(names, t.name)
		if t.kind == kindThink {
			thinking = append(thinking, t.name)
		}
	}
	return append(bothForms(names, false), bothForms(thinking, true)...)
}())

// completionTags wrap a completion's result. Visible drops them wherever
// they stand and shows what they wrap as text: the result is the answer,
// and a model that half-remembers the format writes <result> bare.
var completionTags = append(bothForms([]string{AttemptCompletion, "result"}, false), bothForms([]string{AttemptCompletion, "result"}, true)...)

// visibleTags are the tags Visible takes: textTags, the completion's
// wrapper among them instead of its block.
var visibleTags = newTagSet(func() []string {
	var out []string
	for _, t := range textTags.tags {
		if !slices.Contains(completionTags, t) {
			out = append(out, t)
		}
	}
	return append(out, completionTags...)
}())

// kindOf returns the kind of an outer tag's name.
func kindOf(name string) tagKind {
	for _, t := range outerTags {
		if t.name == name {
			return t.kind
		}
	}
	return kindTool
}

// Foreign reports whether name names a block of a foreign call syntax,
// which holds no parameters and runs nothing.
func Foreign(name string) bool {
	return name == ForeignToolCall || name == ForeignFunctionCalls || name == ForeignJSON
}

// Tags returns the name of every tag the parser takes outside a block:
// the core tools, the <mcp:tool> and <tool_call> dialects, the foreign
// call syntaxes and thinking, each written "<name>" or HTML-escaped
// "&lt;name&gt;". What such a tag opens is never visible text (see
// Visible), except what a completion wraps: the answer.
func Tags() []string {
	out := make([]string, len(outerTags))
	for i, t := range outerTags {
		out[i] = t.name
	}
	return out
}
