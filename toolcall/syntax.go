// The one definition of the tool-call syntax: the tags the
// parser takes outside a block, what each opens, and the parameters inside
// the core tools. The parser and Visible (what users may see of a reply)
// both read it, so a tag cannot be known to one and leak through the other.

package toolcall

import "slices"

// The core tools a model may call, named as Cline names them.
const (
	UseMCPTool          = "use_mcp_tool"
	AccessMCPResource   = "access_mcp_resource"
	AskFollowupQuestion = "ask_followup_question"
	AttemptCompletion   = "attempt_completion"
)

// DialectMCPTool marks a Block written in the fallback <mcp:tool> dialect.
const DialectMCPTool = "mcp:tool"

// Call syntaxes of other model families, which mcpgram does not run. A
// model trained on them may still write them; the parser reads them as
// blocks of that name, which the check answers with feedback asking for
// use_mcp_tool, so that they never reach users as text.
const (
	ForeignToolCall      = "tool_call"      // Hermes, Qwen and others: <tool_call>{JSON}</tool_call>
	ForeignFunctionCalls = "function_calls" // Anthropic's former format: <function_calls><invoke …>
)

// A tagKind says what the parser does with a tag met in visible text.
type tagKind int

const (
	kindTool    tagKind = iota // a core tool block, its parameters in toolParams
	kindDialect                // <mcp:tool>, read by parseDialect
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
	{ForeignToolCall, kindForeign},
	{ForeignFunctionCalls, kindForeign},
	{"thinking", kindThink},
	{"think", kindThink},
}

// toolParams lists, per core tool, the parameter tags the parser
// recognises inside it. Other tags inside a block are ignored.
var toolParams = map[string][]paramTag{
	UseMCPTool:          tags("server_name", "tool_name", "arguments"),
	AccessMCPResource:   tags("server_name", "uri"),
	AskFollowupQuestion: tags("question", "options"),
	AttemptCompletion:   tags("result"),
}

// A paramTag is a parameter's name with its tags, built once.
type paramTag struct{ name, open, close string }

func tags(names ...string) []paramTag {
	out := make([]paramTag, len(names))
	for i, n := range names {
		out[i] = paramTag{n, "<" + n + ">", "</" + n + ">"}
	}
	return out
}

// A tagSet is the tags the parser takes in visible text, with the bytes
// that may follow their '<', so that text scans past any other '<' at once.
type tagSet struct {
	tags   []string
	starts string
}

func newTagSet(tags []string) *tagSet {
	var starts []byte
	for _, t := range tags {
		if !slices.Contains(starts, t[1]) {
			starts = append(starts, t[1])
		}
	}
	return &tagSet{tags: tags, starts: string(starts)}
}

// textTags are outerTags as written, and the closing tags of thinking,
// which the parser also takes alone: see strayThinkEnd.
var textTags = newTagSet(func() []string {
	var out []string
	for _, t := range outerTags {
		out = append(out, "<"+t.name+">")
	}
	for _, t := range outerTags {
		if t.kind == kindThink {
			out = append(out, "</"+t.name+">")
		}
	}
	return out
}())

// completionTags wrap a completion's result. Visible drops them wherever
// they stand and shows what they wrap as text: the result is the answer,
// and a model that half-remembers the format writes <result> bare.
var completionTags = []string{"<" + AttemptCompletion + ">", "</" + AttemptCompletion + ">", "<result>", "</result>"}

// visibleTags are the tags Visible takes: textTags, the completion's
// wrapper among them instead of its block.
var visibleTags = newTagSet(func() []string {
	var out []string
	for _, t := range textTags.tags {
		if t != completionTags[0] {
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

// Foreign reports whether name is one of the foreign call syntaxes, a
// block of which holds no parameters and runs nothing.
func Foreign(name string) bool { return kindOf(name) == kindForeign }

// Tags returns the name of every tag the parser takes outside a block:
// the core tools, the <mcp:tool> dialect, the foreign call syntaxes and
// thinking. What such a tag opens is never visible text (see Visible),
// except what a completion wraps: the answer.
func Tags() []string {
	out := make([]string, len(outerTags))
	for i, t := range outerTags {
		out[i] = t.name
	}
	return out
}
