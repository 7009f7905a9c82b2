package toolcall_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/toolcall"
)

type parseCase struct {
	name   string
	in     string
	text   string
	blocks []toolcall.Block
}

var parseCases = []parseCase{
	{
		name: "plain text",
		in:   "  Hello, world!\n",
		text: "Hello, world!",
	},
	{
		name: "use_mcp_tool with text around",
		in: "Let me check.\n\n<use_mcp_tool>\n<server_name>everything</server_name>\n<tool_name>echo</tool_name>\n" +
			"<arguments>\n{\"message\": \"hi\"}\n</arguments>\n</use_mcp_tool>\n\nDone.",
		text: "Let me check.\n\nDone.",
		blocks: []toolcall.Block{{
			Name:     toolcall.UseMCPTool,
			Params:   map[string]string{"server_name": "everything", "tool_name": "echo", "arguments": `{"message": "hi"}`},
			Complete: true,
			Raw:      "<use_mcp_tool>\n<server_name>everything</server_name>\n<tool_name>echo</tool_name>\n<arguments>\n{\"message\": \"hi\"}\n</arguments>\n</use_mcp_tool>",
		}},
	},
	{
		name: "tags and < inside JSON are harmless",
		in:   `<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{"html": "<b>x</b> </tool_name> </use_mcp_tool> a<b"}</arguments></use_mcp_tool>`,
		blocks: []toolcall.Block{{
			Name:     toolcall.UseMCPTool,
			Params:   map[string]string{"server_name": "s", "tool_name": "t", "arguments": `{"html": "<b>x</b> </tool_name> </use_mcp_tool> a<b"}`},
			Complete: true,
			Raw:      `<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{"html": "<b>x</b> </tool_name> </use_mcp_tool> a<b"}</arguments></use_mcp_tool>`,
		}},
	},
	{
		name: "access_mcp_resource",
		in:   "<access_mcp_resource>\n<server_name>everything</server_name>\n<uri>demo://resource/static/document/1</uri>\n</access_mcp_resource>",
		blocks: []toolcall.Block{{
			Name:     toolcall.AccessMCPResource,
			Params:   map[string]string{"server_name": "everything", "uri": "demo://resource/static/document/1"},
			Complete: true,
			Raw:      "<access_mcp_resource>\n<server_name>everything</server_name>\n<uri>demo://resource/static/document/1</uri>\n</access_mcp_resource>",
		}},
	},
	{
		name: "question with options",
		in:   "<ask_followup_question><question>Which city?</question><options>[\"Paris\", \"Rome\"]</options></ask_followup_question>",
		blocks: []toolcall.Block{{
			Name:     toolcall.AskFollowupQuestion,
			Params:   map[string]string{"question": "Which city?", "options": `["Paris", "Rome"]`},
			Complete: true,
			Raw:      "<ask_followup_question><question>Which city?</question><options>[\"Paris\", \"Rome\"]</options></ask_followup_question>",
		}},
	},
	{
		name: "completion keeps inner markup",
		in:   "<attempt_completion>\n<result>\nUse <b>bold</b> and `<result>`.\n</result>\n</attempt_completion>",
		blocks: []toolcall.Block{{
			Name:     toolcall.AttemptCompletion,
			Params:   map[string]string{"result": "Use <b>bold</b> and `<result>`."},
			Complete: true,
			Raw:      "<attempt_completion>\n<result>\nUse <b>bold</b> and `<result>`.\n</result>\n</attempt_completion>",
		}},
	},
	{
		name: "thinking hidden",
		in:   "<thinking>I should greet. <use_mcp_tool></thinking>Hi <think>hmm</think>there.",
		text: "Hi there.",
	},
	{
		name: "closing think without opening",
		in:   "The user wants a greeting.\nI will greet.\n</think>\n\nHello! <b>x</b></thinking> there",
		text: "Hello! <b>x</b> there",
	},
	{
		name: "stray closing think after a block is dropped",
		in:   "A <attempt_completion><result>ok</result></attempt_completion> B </think> C",
		text: "A\n\nB  C",
		blocks: []toolcall.Block{{
			Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "ok"}, Complete: true,
			Raw: "<attempt_completion><result>ok</result></attempt_completion>",
		}},
	},
	{
		name: "unclosed thinking hides the rest",
		in:   "Hello\n<think>secret plans",
		text: "Hello",
	},
	{
		name: "unclosed block is incomplete",
		in:   "Working.\n<use_mcp_tool>\n<server_name>everything</server_name>\n<tool_name>ec",
		text: "Working.",
		blocks: []toolcall.Block{{
			Name:   toolcall.UseMCPTool,
			Params: map[string]string{"server_name": "everything", "tool_name": "ec"}, OpenParam: "tool_name",
			Raw: "<use_mcp_tool>\n<server_name>everything</server_name>\n<tool_name>ec",
		}},
	},
	{
		name: "lone < and unknown tags are text",
		in:   "a < b and <b>bold</b> <use_mcp_too x",
		text: "a < b and <b>bold</b> <use_mcp_too x",
	},
	{
		name: "partial tag at the end is text",
		in:   "see <use_mcp",
		text: "see <use_mcp",
	},
	{
		name: "unknown tags inside a block are ignored",
		in:   "<attempt_completion><note>x</note><result>ok</result></attempt_completion>",
		blocks: []toolcall.Block{{
			Name:     toolcall.AttemptCompletion,
			Params:   map[string]string{"result": "ok"},
			Complete: true,
			Raw:      "<attempt_completion><note>x</note><result>ok</result></attempt_completion>",
		}},
	},
	{
		name: "two blocks",
		in:   "A\n<use_mcp_tool><server_name>s</server_name><tool_name>a</tool_name></use_mcp_tool>\n<use_mcp_tool><server_name>s</server_name><tool_name>b</tool_name></use_mcp_tool>\nB",
		text: "A\n\nB",
		blocks: []toolcall.Block{
			{Name: toolcall.UseMCPTool, Params: map[string]string{"server_name": "s", "tool_name": "a"}, Complete: true, Raw: "<use_mcp_tool><server_name>s</server_name><tool_name>a</tool_name></use_mcp_tool>"},
			{Name: toolcall.UseMCPTool, Params: map[string]string{"server_name": "s", "tool_name": "b"}, Complete: true, Raw: "<use_mcp_tool><server_name>s</server_name><tool_name>b</tool_name></use_mcp_tool>"},
		},
	},
	{
		name: "fence around a block is dropped",
		in:   "Let me check.\n```xml\n<attempt_completion><result>ok</result></attempt_completion>\n```\nDone.",
		text: "Let me check.\n\nDone.",
		blocks: []toolcall.Block{{
			Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "ok"}, Complete: true, Fenced: true,
			Raw: "<attempt_completion><result>ok</result></attempt_completion>",
		}},
	},
	{
		name: "fence around two blocks, at the very start and end",
		in:   "```\n<attempt_completion><result>a</result></attempt_completion>\n\n<attempt_completion><result>b</result></attempt_completion>\n  ```",
		blocks: []toolcall.Block{
			{Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "a"}, Complete: true, Fenced: true, Raw: "<attempt_completion><result>a</result></attempt_completion>"},
			{Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "b"}, Complete: true, Fenced: true, Raw: "<attempt_completion><result>b</result></attempt_completion>"},
		},
	},
	{
		name: "code blocks in text are kept",
		in:   "Code:\n```go\nfmt.Println(`x`)\n```\n``\nEnd\n```",
		text: "Code:\n```go\nfmt.Println(`x`)\n```\n``\nEnd\n```",
	},
	{
		name: "fence without closer after block",
		in:   "```xml\n<attempt_completion><result>ok</result></attempt_completion>\nMore\n```",
		text: "More\n```",
		blocks: []toolcall.Block{{
			Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "ok"}, Complete: true, Fenced: true,
			Raw: "<attempt_completion><result>ok</result></attempt_completion>",
		}},
	},
	{
		name: "short or inline backticks before a block are kept",
		in:   "A `\n<attempt_completion><result>ok</result></attempt_completion>\n`` \n<attempt_completion><result>ok</result></attempt_completion>",
		text: "A `\n\n``",
		blocks: []toolcall.Block{
			{Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "ok"}, Complete: true, Raw: "<attempt_completion><result>ok</result></attempt_completion>"},
			{Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "ok"}, Complete: true, Raw: "<attempt_completion><result>ok</result></attempt_completion>"},
		},
	},
	{
		name: "mcp:tool dialect with JSON",
		in:   "<mcp:tool>\nname: everything__echo\nparameters: {\n  \"message\": \"hi\"\n}\n</mcp:tool>",
		blocks: []toolcall.Block{{
			Name:     toolcall.UseMCPTool,
			Params:   map[string]string{"tool_name": "everything__echo", "arguments": "{\n  \"message\": \"hi\"\n}"},
			Complete: true,
			Dialect:  toolcall.DialectMCPTool,
			Raw:      "<mcp:tool>\nname: everything__echo\nparameters: {\n  \"message\": \"hi\"\n}\n</mcp:tool>",
		}},
	},
	{
		name: "mcp:tool dialect lenient",
		in:   "<mcp:tool>\nname: get-sum\nparameters:\n  a: 2\n  b: 3\n  note: two words\n</mcp:tool>",
		blocks: []toolcall.Block{{
			Name:     toolcall.UseMCPTool,
			Params:   map[string]string{"tool_name": "get-sum", "arguments": `{"a":2,"b":3,"note":"two words"}`},
			Complete: true,
			Dialect:  toolcall.DialectMCPTool,
			Raw:      "<mcp:tool>\nname: get-sum\nparameters:\n  a: 2\n  b: 3\n  note: two words\n</mcp:tool>",
		}},
	},
	{
		name: "tool_call with JSON",
		in:   "Let me check.\n<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"message\": \"<hi>\"}}\n</tool_call>",
		text: "Let me check.",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "echo", "arguments": `{"message": "<hi>"}`}, Complete: true,
			Dialect: toolcall.DialectToolCall, Repairs: []string{toolcall.RepairToolCall},
			Raw: "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"message\": \"<hi>\"}}\n</tool_call>",
		}},
	},
	{
		name: "tool_call with JSON in typographic quotes, arguments as a string",
		in:   "<tool_call>{“name”: “everything__echo”, “parameters”: “{\\\"message\\\": 1}”}</tool_call>",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "everything__echo", "arguments": `{"message": 1}`}, Complete: true,
			Dialect: toolcall.DialectToolCall, Repairs: []string{toolcall.RepairToolCall, toolcall.RepairQuotes},
			Raw: "<tool_call>{“name”: “everything__echo”, “parameters”: “{\\\"message\\\": 1}”}</tool_call>",
		}},
	},
	{
		name: "tool_call naming a core tool",
		in:   `<tool_call>{"name": "use_mcp_tool", "arguments": {"server_name": "s", "tool_name": "t", "arguments": {"a": [1]}}}</tool_call>`,
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"server_name": "s", "tool_name": "t", "arguments": `{"a": [1]}`}, Complete: true,
			Repairs: []string{toolcall.RepairToolCall},
			Raw:     `<tool_call>{"name": "use_mcp_tool", "arguments": {"server_name": "s", "tool_name": "t", "arguments": {"a": [1]}}}</tool_call>`,
		}},
	},
	{
		name: "tool_call with a function",
		in:   "<tool_call>\n<function=write_file>\n<parameter=path>\n/a\n</parameter>\n<parameter=content>\n  x < y\n\n</parameter>\n</function>\n</tool_call>\nDone.",
		text: "Done.",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "write_file", "arguments": "<parameter=path>\n/a\n</parameter>\n<parameter=content>\n  x < y\n\n</parameter>"}, Complete: true,
			Dialect: toolcall.DialectFunction, Repairs: []string{toolcall.RepairFunction},
			Raw: "<tool_call>\n<function=write_file>\n<parameter=path>\n/a\n</parameter>\n<parameter=content>\n  x < y\n\n</parameter>\n</function>\n</tool_call>",
		}},
	},
	{
		name: "tool_call with a function naming a core tool",
		in:   "<tool_call><function=attempt_completion><parameter=result>\nAll done.\n</parameter></function></tool_call>",
		blocks: []toolcall.Block{{
			Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "All done."}, Complete: true,
			Repairs: []string{toolcall.RepairFunction},
			Raw:     "<tool_call><function=attempt_completion><parameter=result>\nAll done.\n</parameter></function></tool_call>",
		}},
	},
	{
		name: "tool_call neither form is foreign",
		in:   "A <tool_call>echo hi</tool_call>",
		text: "A",
		blocks: []toolcall.Block{{
			Name: toolcall.ForeignToolCall, Params: map[string]string{}, Complete: true,
			Raw: "<tool_call>echo hi</tool_call>",
		}},
	},
	{
		name: "tool_call with a key given twice is foreign",
		in:   `<tool_call>{"name": "a", "name": "b"}</tool_call>`,
		blocks: []toolcall.Block{{
			Name: toolcall.ForeignToolCall, Params: map[string]string{}, Complete: true,
			Raw: `<tool_call>{"name": "a", "name": "b"}</tool_call>`,
		}},
	},
	{
		name: "tool_call cut off",
		in:   `On it. <tool_call>{"name": "echo", "argu`,
		text: "On it.",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{}, Dialect: toolcall.DialectToolCall,
			Raw: `<tool_call>{"name": "echo", "argu`,
		}},
	},
	{
		name: "HTML-escaped call",
		in:   "Checking.\n&lt;use_mcp_tool&gt;&lt;server_name&gt;s&lt;/server_name&gt;&lt;tool_name&gt;t&lt;/tool_name&gt;&lt;arguments&gt;{&quot;q&quot;: &quot;a &amp;amp; b&quot;}&lt;/arguments&gt;&lt;/use_mcp_tool&gt;",
		text: "Checking.",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"server_name": "s", "tool_name": "t", "arguments": `{"q": "a &amp; b"}`}, Complete: true,
			Repairs: []string{toolcall.RepairEscaped},
			Raw:     "&lt;use_mcp_tool&gt;&lt;server_name&gt;s&lt;/server_name&gt;&lt;tool_name&gt;t&lt;/tool_name&gt;&lt;arguments&gt;{&quot;q&quot;: &quot;a &amp;amp; b&quot;}&lt;/arguments&gt;&lt;/use_mcp_tool&gt;",
		}},
	},
	{
		name: "HTML-escaped tool_call and thinking",
		in:   "&lt;think&gt;hmm&lt;/think&gt;&lt;tool_call&gt;{&quot;name&quot;: &quot;echo&quot;}&lt;/tool_call&gt; AT&T &lt;b&gt;",
		text: "AT&T &lt;b&gt;",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "echo", "arguments": ""}, Complete: true,
			Dialect: toolcall.DialectToolCall, Repairs: []string{toolcall.RepairEscaped, toolcall.RepairToolCall},
			Raw: "&lt;tool_call&gt;{&quot;name&quot;: &quot;echo&quot;}&lt;/tool_call&gt;",
		}},
	},
	{
		name: "a reply that is a JSON call",
		in:   "<think>call it</think>\n {\"tool\": \"echo\", \"params\": {\"message\": \"hi\"}}\n",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "echo", "arguments": `{"message": "hi"}`}, Complete: true,
			Dialect: toolcall.DialectJSON, Repairs: []string{toolcall.RepairJSONCall},
			Raw: `{"tool": "echo", "params": {"message": "hi"}}`,
		}},
	},
	{
		name: "a reply that is a fenced JSON call",
		in:   "```json\n{\"name\": \"get-sum\", \"arguments\": {\"a\": 1, \"b\": 2,}}\n```",
		blocks: []toolcall.Block{{
			Name: toolcall.UseMCPTool, Params: map[string]string{"tool_name": "get-sum", "arguments": `{"a": 1, "b": 2}`}, Complete: true, Fenced: true,
			Dialect: toolcall.DialectJSON, Repairs: []string{toolcall.RepairJSONCall, toolcall.RepairTrailingComma},
			Raw: "```json\n{\"name\": \"get-sum\", \"arguments\": {\"a\": 1, \"b\": 2,}}\n```",
		}},
	},
	{
		name: "a JSON call beside prose is text",
		in:   "Like this: {\"tool\": \"echo\", \"params\": {}}",
		text: "Like this: {\"tool\": \"echo\", \"params\": {}}",
	},
	{
		name: "a JSON call with a key twice is foreign",
		in:   `{"tool": "echo", "tool": "rm", "params": {}}`,
		blocks: []toolcall.Block{{
			Name: toolcall.ForeignJSON, Params: map[string]string{}, Complete: true,
			Raw: `{"tool": "echo", "tool": "rm", "params": {}}`,
		}},
	},
	{
		name: "held text ending in a character of several bytes",
		in:   "{né}",
		text: "{né}",
	},
	{
		name: "a character of several bytes after a fence's closer",
		in:   "```\n<attempt_completion><result>x</result></attempt_completion>\n```\né",
		text: "é",
		blocks: []toolcall.Block{{
			Name: toolcall.AttemptCompletion, Params: map[string]string{"result": "x"}, Complete: true, Fenced: true,
			Raw: "<attempt_completion><result>x</result></attempt_completion>",
		}},
	},
	{
		name: "JSON with other keys is text",
		in:   "{\"name\": \"Ada\", \"born\": 1815}",
		text: "{\"name\": \"Ada\", \"born\": 1815}",
	},
	{
		name: "foreign function_calls cut off",
		in:   "A <function_calls><invoke name=\"echo\"><parameter name=\"message\">hi</parameter>",
		text: "A",
		blocks: []toolcall.Block{{
			Name: toolcall.ForeignFunctionCalls, Params: map[string]string{},
			Raw: "<function_calls><invoke name=\"echo\"><parameter name=\"message\">hi</parameter>",
		}},
	},
	{
		name: "mcp:tool dialect without parameters line",
		in:   "<mcp:tool>name: echo\nmessage: hello</mcp:tool>",
		blocks: []toolcall.Block{{
			Name:     toolcall.UseMCPTool,
			Params:   map[string]string{"tool_name": "echo", "arguments": `{"message":"hello"}`},
			Complete: true,
			Dialect:  toolcall.DialectMCPTool,
			Raw:      "<mcp:tool>name: echo\nmessage: hello</mcp:tool>",
		}},
	},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got := toolcall.Parse(tc.in)
			checkReply(t, got, tc.text, tc.blocks)
		})
	}
}

func checkReply(t *testing.T, got toolcall.Reply, text string, blocks []toolcall.Block) {
	t.Helper()
	if got.Text != text {
		t.Errorf("text:\ngot  %q\nwant %q", got.Text, text)
	}
	if len(got.Blocks) != len(blocks) {
		t.Fatalf("got %d blocks %+v, want %d %+v", len(got.Blocks), got.Blocks, len(blocks), blocks)
	}
	for i := range blocks {
		if !reflect.DeepEqual(got.Blocks[i], blocks[i]) {
			t.Errorf("block %d:\ngot  %#v\nwant %#v", i, got.Blocks[i], blocks[i])
		}
	}
}

// TestParseSplitEverywhere feeds each case in two chunks split at every
// byte, and byte by byte, and expects the same reply as whole.
func TestParseSplitEverywhere(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i <= len(tc.in); i++ {
				got := parseChunks(t, []string{tc.in[:i], tc.in[i:]})
				checkReply(t, got, tc.text, tc.blocks)
			}
			got := parseChunks(t, strings.Split(tc.in, ""))
			checkReply(t, got, tc.text, tc.blocks)
		})
	}
}

// parseChunks feeds chunks, checking the streaming contract on the way:
// visible text only grows, and only by extending what was shown, and each
// block is returned once, in order (a JSON reply's by Close).
func parseChunks(t testing.TB, chunks []string) toolcall.Reply {
	t.Helper()
	p := toolcall.NewParser()
	var shown string
	var reset bool
	var streamed []toolcall.Block
	for _, c := range chunks {
		vis, done := p.Write(c)
		if !strings.HasPrefix(vis, shown) {
			if joined := strings.Join(chunks, ""); reset || !strings.Contains(joined, "</think") && !strings.Contains(joined, "&lt;/think") {
				t.Fatalf("visible text went back: had %q, now %q (chunks %q)", shown, vis, chunks)
			}
			reset = true // a stray </think> made the text so far thinking
		}
		shown = vis
		streamed = append(streamed, done...)
	}
	r := p.Close()
	if !strings.HasPrefix(r.Text, shown) {
		t.Fatalf("final text %q does not extend shown %q", r.Text, shown)
	}
	n := len(r.Blocks)
	if n > 0 && (!r.Blocks[n-1].Complete || r.Blocks[n-1].Closing() == "}") {
		n-- // a JSON reply is a call only once it has ended
	}
	if !reflect.DeepEqual(streamed, r.Blocks[:n]) && (len(streamed) != 0 || n != 0) {
		t.Fatalf("streamed blocks %+v, final %+v", streamed, r.Blocks[:n])
	}
	return r
}

func TestParserStreamsText(t *testing.T) {
	p := toolcall.NewParser()
	steps := []struct{ chunk, visible string }{
		{"Hello ", "Hello"},
		{"there <", "Hello there"},
		{"use_mcp", "Hello there"},
		{"_tool><server_name>s</server_name>", "Hello there"},
		{"<tool_name>t</tool_name></use_mcp_tool>\n", "Hello there"},
		{"\nand <b>more", "Hello there\n\nand <b>more"},
	}
	for _, s := range steps {
		got, _ := p.Write(s.chunk)
		if got != s.visible {
			t.Fatalf("after %q: got visible %q, want %q", s.chunk, got, s.visible)
		}
	}
	if r := p.Close(); len(r.Blocks) != 1 || r.Text != "Hello there\n\nand <b>more" {
		t.Fatalf("got %+v", r)
	}
}

func TestParserBlockOnce(t *testing.T) {
	p := toolcall.NewParser()
	_, done := p.Write("<attempt_completion><result>ok</result></attempt_")
	if len(done) != 0 {
		t.Fatalf("block returned before its closing tag: %+v", done)
	}
	_, done = p.Write("completion>")
	if len(done) != 1 || done[0].Params["result"] != "ok" {
		t.Fatalf("got %+v, want the completed block", done)
	}
	if _, done = p.Write(" bye"); len(done) != 0 {
		t.Fatalf("block returned twice: %+v", done)
	}
	if r := p.Close(); r.Text != "bye" {
		t.Fatalf("got text %q", r.Text)
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in, uint64(1))
	}
	f.Add("<think><thinking></thinking></think>", uint64(7))
	f.Add("<mcp:tool>name: x\nparameters:\n</mcp:tool><mcp:tool>", uint64(3))
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		whole := toolcall.Parse(in)
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var chunks []string
		for rest := in; rest != ""; {
			n := min(len(rest), 1+rng.IntN(16))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		split := parseChunks(t, chunks)
		if !reflect.DeepEqual(whole, split) {
			t.Fatalf("split parse differs:\nwhole %#v\nsplit %#v\nchunks %q", whole, split, chunks)
		}
		// Text around a removed thinking block can join into a tag
		// (<thi<think></think>nking>), which Visible reads again; blocks
		// leave a separator, so without thinking no tag can form.
		for _, tag := range toolcall.Tags() {
			if strings.Contains(whole.Text, "<"+tag+">") && !strings.Contains(in, "think") {
				t.Fatalf("visible text %q holds <%s>", whole.Text, tag)
			}
		}
		for _, b := range whole.Blocks {
			if !strings.Contains(in, b.Raw) {
				t.Fatalf("block raw %q is not in the input", b.Raw)
			}
			if b.Complete && b.Closing() != "}" && !strings.HasSuffix(b.Raw, b.Closing()) {
				t.Fatalf("complete block %q does not end with its closing tag", b.Raw)
			}
		}
	})
}

// tool writes a use_mcp_tool block.
func tool(server, name, args string) string {
	return "<use_mcp_tool><server_name>" + server + "</server_name><tool_name>" + name + "</tool_name><arguments>" + args + "</arguments></use_mcp_tool>"
}

// A reply that starts as a JSON object is held back from the visible text
// while it streams: only its end tells a JSON call from an answer. Text
// that starts otherwise streams as it comes.
func TestParserHoldsJSON(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		shown  string // the visible text before Close
		text   string // after
		blocks int
	}{
		{"an answer in JSON", []string{"{\"name\": ", "\"Ada\", ", "\"born\": 1815}"}, "", `{"name": "Ada", "born": 1815}`, 0},
		{"a JSON call", []string{"<think>x</think>\n{\"tool\": ", "\"echo\", \"params\": ", "{}}"}, "", "", 1},
		{"a fenced JSON call", []string{"```json\n", "{\"tool\": \"echo\"}", "\n```"}, "", "", 1},
		{"prose first", []string{"Sure: ", "{\"tool\": ", "\"echo\"}"}, `Sure: {"tool": "echo"}`, `Sure: {"tool": "echo"}`, 0},
		{"a block first", []string{tool("s", "t", "{}"), "\n{\"tool\": ", "\"echo\"}"}, `{"tool": "echo"}`, `{"tool": "echo"}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := toolcall.NewParser()
			var shown string
			for _, c := range tc.chunks {
				shown, _ = p.Write(c)
			}
			r := p.Close()
			if shown != tc.shown || r.Text != tc.text || len(r.Blocks) != tc.blocks {
				t.Errorf("shown %q, then text %q and %d blocks; want %q, %q, %d", shown, r.Text, len(r.Blocks), tc.shown, tc.text, tc.blocks)
			}
		})
	}
}
