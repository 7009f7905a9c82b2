package executor_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

// repairCatalog has tools whose schemas type integers, numbers and
// booleans, a tool name two servers share, and a server that
// auto-approves nothing.
func repairCatalog() mcpgram.Catalog {
	schema := func(s string) json.RawMessage { return json.RawMessage(s) }
	return mcpgram.Catalog{
		Version: 1,
		Servers: []mcpgram.ServerInfo{
			{Name: "everything", Status: mcpgram.StatusRunning, AutoApprove: []string{"echo", "get-sum"}, Tools: []mcpgram.Tool{
				{Name: "echo", InputSchema: schema(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)},
				{Name: "get-sum", InputSchema: schema(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
			}},
			{Name: "filesystem", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
				{Name: "list_directory", InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"recursive":{"type":"boolean"},"depth":{"type":"integer"},"tags":{"type":"array"}},"required":["path"]}`)},
				{Name: "read_file", InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
				{Name: "write_file", InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
			}},
			{Name: "notes", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
				{Name: "add_note", InputSchema: schema(`{"type":"object","properties":{"text":{"type":"string"},"meta":{"type":"object"}}}`)},
				{Name: "search", InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
			}},
			{Name: "web", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
				{Name: "fetch", InputSchema: schema(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
				{Name: "search", InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
			}},
		},
	}
}

// call writes a use_mcp_tool block with its arguments as given.
func call(server, name, args string) string {
	return "<use_mcp_tool>\n<server_name>" + server + "</server_name>\n<tool_name>" + name + "</tool_name>\n<arguments>" + args + "</arguments>\n</use_mcp_tool>"
}

// A nearMiss is a malformed reply and the call it plainly means, or none
// when what it means is not plain and it must be fed back.
type nearMiss struct {
	class, name, reply string
	server, tool, args string   // the meant call; server "" when it must be fed back
	repairs            []string // the kinds recorded, when it runs
	reasoning          string   // the endpoint's reasoning channel, when the reply has one
}

// prepareNearMiss prepares a reply as the agent does in XML mode: the
// reasoning channel joins the reply's thinking, where a call is taken
// from when the reply's text has none.
func prepareNearMiss(ex *executor.Executor, cat mcpgram.Catalog, nm nearMiss) executor.Plan {
	r := toolcall.Parse(nm.reply)
	r.Thinking = strings.TrimSpace(nm.reasoning + "\n" + r.Thinking)
	if withCall, ok := r.CallFromThinking(); ok {
		r = withCall
	}
	return ex.Prepare(cat, r, false)
}

func nearMisses() []nearMiss {
	cut := func(s string, n int) string { return s[:len(s)-n] }
	return []nearMiss{
		// JSON slips in arguments.
		{"json", "trailing comma", call("filesystem", "read_file", `{"path": "/x",}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"json_trailing_comma"}, ""},
		{"json", "trailing commas in arrays and objects", call("filesystem", "list_directory", "{\"path\": \"/x\", \"tags\": [\"a\", \"b\",],\n}"), "filesystem", "list_directory", `{"path":"/x","tags":["a","b"]}`, []string{"json_trailing_comma"}, ""},
		{"json", "typographic quotes", call("everything", "echo", `{“message”: “hi there”}`), "everything", "echo", `{"message":"hi there"}`, []string{"json_quotes"}, ""},
		{"json", "single quotes", call("filesystem", "read_file", `{'path': '/tmp/a "b"'}`), "filesystem", "read_file", `{"path":"/tmp/a \"b\""}`, []string{"json_quotes"}, ""},
		{"json", "single-quoted keys, an apostrophe in double quotes", call("everything", "echo", `{'message': "it's"}`), "everything", "echo", `{"message":"it's"}`, []string{"json_quotes"}, ""},
		{"json", "comments", call("everything", "get-sum", "{\"a\": 1, // the first\n\"b\": 2 /* the second */}"), "everything", "get-sum", `{"a":1,"b":2}`, []string{"json_comments"}, ""},
		{"json", "closing brace missing", call("filesystem", "read_file", `{"path": "/x"`), "filesystem", "read_file", `{"path":"/x"}`, []string{"json_unclosed"}, ""},
		{"json", "bracket and brace missing", call("filesystem", "list_directory", `{"path": "/x", "tags": ["a", "b"`), "filesystem", "list_directory", `{"path":"/x","tags":["a","b"]}`, []string{"json_unclosed"}, ""},
		{"json", "inner object left open with several members", call("notes", "add_note", `{"text": "t", "meta": {"x": 1, "y": 2`), "", "", "", nil, ""},
		{"json", "string left open", call("everything", "echo", `{"message": "hi`), "", "", "", nil, ""},
		{"json", "apostrophe inside single quotes", call("everything", "echo", `{'message': 'it's'}`), "", "", "", nil, ""},
		{"json", "two commas", call("everything", "echo", `{"message": "hi",,}`), "", "", "", nil, ""},
		// Name variants.
		{"name", "server in the wrong case", call("FileSystem", "read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"name_case"}, ""},
		{"name", "tool in the wrong case", call("filesystem", "Read_File", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"name_case"}, ""},
		{"name", "server__tool, no server", call("", "filesystem__read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"name_joined"}, ""},
		{"name", "server.tool", call("filesystem", "filesystem.read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"name_joined"}, ""},
		{"name", "server/tool, server unknown", call("fs", "filesystem/read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"name_joined"}, ""},
		{"name", "server unknown, tool on one server", call("files", "write_file", `{"path": "/x", "content": "c"}`), "filesystem", "write_file", `{"content":"c","path":"/x"}`, []string{"server_inferred"}, ""},
		{"name", "no server, tool on one server", "<use_mcp_tool><tool_name>fetch</tool_name><arguments>{\"url\": \"https://x\"}</arguments></use_mcp_tool>", "web", "fetch", `{"url":"https://x"}`, []string{"server_inferred"}, ""},
		{"name", "server misspelt, tool on one server", call("filesystm", "read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"server_inferred"}, ""},
		{"name", "server unknown and unlike the one with the tool", call("browser", "fetch", `{"url": "https://x"}`), "", "", "", nil, ""},
		{"name", "short unknown server, one edit from the one with the tool", call("wb", "fetch", `{"url": "https://x"}`), "web", "fetch", `{"url":"https://x"}`, []string{"server_inferred"}, ""},
		{"name", "short unknown server, two edits away", call("db", "fetch", `{"url": "https://x"}`), "", "", "", nil, ""},
		{"name", "no server, tool on two servers", "<use_mcp_tool><tool_name>search</tool_name><arguments>{\"query\": \"q\"}</arguments></use_mcp_tool>", "", "", "", nil, ""},
		{"name", "server named lacks the tool", call("notes", "fetch", `{"url": "https://x"}`), "", "", "", nil, ""},
		{"name", "server_name and tool_name name two servers", call("notes", "web__search", `{"query": "q"}`), "", "", "", nil, ""},
		// Argument forms.
		{"args", "XML elements", call("filesystem", "list_directory", "\n<path>/src</path>\n<recursive>true</recursive>\n<depth>2</depth>\n"), "filesystem", "list_directory", `{"depth":2,"path":"/src","recursive":true}`, []string{"args_xml"}, ""},
		{"args", "key: value lines", call("everything", "get-sum", "\na: 1.5\nb: -2\n"), "everything", "get-sum", `{"a":1.5,"b":-2}`, []string{"args_lines"}, ""},
		{"args", "a number where the tool wants a string stays a string", call("everything", "echo", "message: 42"), "everything", "echo", `{"message":"42"}`, []string{"args_lines"}, ""},
		{"args", "XML elements without <arguments>", "<use_mcp_tool>\n<server_name>filesystem</server_name>\n<tool_name>list_directory</tool_name>\n<path>/src</path>\n<depth>1</depth>\n</use_mcp_tool>", "filesystem", "list_directory", `{"depth":1,"path":"/src"}`, []string{"args_xml"}, ""},
		{"args", "unknown elements without <arguments>", "<use_mcp_tool>\n<server_name>notes</server_name>\n<tool_name>search</tool_name>\n<q>x</q>\n</use_mcp_tool>", "", "", "", nil, ""},
		{"args", "XML integer that is not one", call("filesystem", "list_directory", "<path>/src</path><depth>two</depth>"), "", "", "", nil, ""},
		{"args", "XML key given twice", call("filesystem", "read_file", "<path>/a</path><path>/b</path>"), "", "", "", nil, ""},
		{"args", "XML entity", call("filesystem", "write_file", "<path>/a</path><content>a &amp; b</content>"), "", "", "", nil, ""},
		{"args", "quoted line value", call("everything", "echo", `message: "hi"`), "", "", "", nil, ""},
		{"args", "line key not in the schema", call("everything", "echo", "msg: hi"), "", "", "", nil, ""},
		// Framing.
		{"framing", "cut off after the arguments", cut(call("filesystem", "read_file", `{"path": "/x"}`), len("\n</use_mcp_tool>")), "filesystem", "read_file", `{"path":"/x"}`, []string{"cut_off"}, ""},
		{"framing", "cut off in the closing tag of whole arguments", cut(call("filesystem", "read_file", `{"path": "/x"}`), len("ents>\n</use_mcp_tool>")), "filesystem", "read_file", `{"path":"/x"}`, []string{"cut_off"}, ""},
		{"framing", "cut off inside the arguments", "<use_mcp_tool><server_name>filesystem</server_name><tool_name>read_file</tool_name><arguments>{\"path\": \"/x", "", "", "", nil, ""},
		{"framing", "cut off before the arguments", "<use_mcp_tool><server_name>filesystem</server_name><tool_name>read_file</tool_name>", "", "", "", nil, ""},
		{"framing", "cut off, a required argument missing", cut(call("filesystem", "write_file", `{"path": "/x"}`), len("\n</use_mcp_tool>")), "", "", "", nil, ""},
		{"framing", "nothing but a fenced call", "```xml\n" + call("filesystem", "read_file", `{"path": "/x"}`) + "\n```", "filesystem", "read_file", `{"path":"/x"}`, []string{"fenced"}, ""},
		{"framing", "a fenced call beside text", "For example:\n```xml\n" + call("filesystem", "read_file", `{"path": "/x"}`) + "\n```", "", "", "", nil, ""},
		{"framing", "thinking before the call", "<think>the file</think>\n" + call("filesystem", "read_file", `{"path": "/x"}`), "filesystem", "read_file", `{"path":"/x"}`, nil, ""},
		// Several at once.
		{"mixed", "wrong case, typographic quotes, trailing comma", call("Everything", "ECHO", `{“message”: “hi”,}`), "everything", "echo", `{"message":"hi"}`, []string{"name_case", "json_trailing_comma", "json_quotes"}, ""},
		// Typographic quotes, however a keyboard pairs them.
		{"quotes", "left quotes on both sides", call("everything", "echo", `{“message“: “hi there“}`), "everything", "echo", `{"message":"hi there"}`, []string{"json_quotes"}, ""},
		{"quotes", "low and high quotes", call("filesystem", "read_file", `{„path“: „/x“}`), "filesystem", "read_file", `{"path":"/x"}`, []string{"json_quotes"}, ""},
		{"quotes", "an apostrophe inside typographic quotes", call("everything", "echo", `{“message”: “it’s”}`), "everything", "echo", `{"message":"it’s"}`, []string{"json_quotes"}, ""},
		{"quotes", "typographic quotes inside a typographic string", call("everything", "echo", `{“message”: “say “hi” now”}`), "", "", "", nil, ""},
		{"quotes", "in the <mcp:tool> dialect", "<mcp:tool>\nname: read_file\nparameters: {“path”: “/x”}\n</mcp:tool>", "filesystem", "read_file", `{"path":"/x"}`, []string{"json_quotes"}, ""},
		// HTML-escaped markup.
		{"escaped", "an escaped call", escapeHTML(call("filesystem", "read_file", `{"path": "/a&b"}`)), "filesystem", "read_file", `{"path":"/a\u0026b"}`, []string{"html_escaped"}, ""},
		{"escaped", "an escaped call with a JSON slip", "Reading it.\n" + escapeHTML(call("filesystem", "read_file", `{'path': '/x',}`)), "filesystem", "read_file", `{"path":"/x"}`, []string{"html_escaped", "json_trailing_comma", "json_quotes"}, ""},
		{"escaped", "an escaped <mcp:tool>", escapeHTML("<mcp:tool>\nname: get-sum\nparameters: {\"a\": 1, \"b\": 2}\n</mcp:tool>"), "everything", "get-sum", `{"a":1,"b":2}`, []string{"html_escaped"}, ""},
		{"escaped", "an escaped call to an unknown tool", escapeHTML(call("filesystem", "delete_all", `{}`)), "", "", "", nil, ""},
		{"escaped", "an escaped example beside prose", "For example:\n```\n" + escapeHTML(call("filesystem", "read_file", `{"path": "/x"}`)) + "\n```", "", "", "", nil, ""},
		// Calls written in the thinking, or the reasoning channel.
		{"reasoning", "a call in <think>, no text", "<think>I need the file.\n" + call("filesystem", "read_file", `{"path": "/x"}`) + "\n</think>", "filesystem", "read_file", `{"path":"/x"}`, []string{"reasoning"}, ""},
		{"reasoning", "a call in the reasoning channel, a sentence in the reply", "Let me look at that file.", "filesystem", "read_file", `{"path":"/x"}`, []string{"reasoning"}, "The user wants /x.\n" + call("filesystem", "read_file", `{"path": "/x"}`)},
		{"reasoning", "a <tool_call> in the reasoning channel", "", "everything", "echo", `{"message":"hi"}`, []string{"reasoning", "dialect_tool_call"}, "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"message\": \"hi\"}}\n</tool_call>"},
		{"reasoning", "the same call twice in the reasoning", "", "filesystem", "read_file", `{"path":"/x"}`, []string{"reasoning"}, call("filesystem", "read_file", `{"path": "/x"}`) + "\nYes, that one:\n" + call("filesystem", "read_file", `{"path": "/x"}`)},
		{"reasoning", "a call in the reply wins over the reasoning's", call("filesystem", "read_file", `{"path": "/b"}`), "filesystem", "read_file", `{"path":"/b"}`, nil, call("filesystem", "read_file", `{"path": "/a"}`)},
		{"reasoning", "two different calls in the reasoning", "", "", "", "", nil, call("filesystem", "read_file", `{"path": "/a"}`) + "\nor rather\n" + call("filesystem", "read_file", `{"path": "/b"}`)},
		{"reasoning", "a call cut off in the reasoning", "", "", "", "", nil, "<use_mcp_tool><server_name>filesystem</server_name><tool_name>read_file</tool_name><arguments>{\"path\": \"/x\"}"},
		{"reasoning", "an example call in the reasoning", "Here is how.", "", "", "", nil, "I could show:\n```xml\n" + call("filesystem", "read_file", `{"path": "/x"}`) + "\n```"},
		// Other families' dialects.
		{"dialect", "<tool_call> JSON, a bare tool name", "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/x\"}}\n</tool_call>", "filesystem", "read_file", `{"path":"/x"}`, []string{"dialect_tool_call"}, ""},
		{"dialect", "<tool_call> JSON, server__tool, arguments as a string", `<tool_call>{"name": "web__search", "arguments": "{\"query\": \"q\"}"}</tool_call>`, "web", "search", `{"query":"q"}`, []string{"dialect_tool_call"}, ""},
		{"dialect", "<tool_call> JSON naming use_mcp_tool", `<tool_call>{"name": "use_mcp_tool", "arguments": {"server_name": "filesystem", "tool_name": "read_file", "arguments": {"path": "/x"}}}</tool_call>`, "filesystem", "read_file", `{"path":"/x"}`, []string{"dialect_tool_call"}, ""},
		{"dialect", "<tool_call> JSON in typographic quotes", "<tool_call>{“name”: “echo”, “arguments”: {“message”: “hi”}}</tool_call>", "everything", "echo", `{"message":"hi"}`, []string{"dialect_tool_call", "json_quotes"}, ""},
		{"dialect", "<tool_call> JSON, a tool two servers have", `<tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>`, "", "", "", nil, ""},
		{"dialect", "<tool_call> JSON, an unknown tool", `<tool_call>{"name": "delete_all", "arguments": {}}</tool_call>`, "", "", "", nil, ""},
		{"dialect", "<tool_call> JSON, arguments the schema refuses", `<tool_call>{"name": "get-sum", "arguments": {"a": 1}}</tool_call>`, "", "", "", nil, ""},
		{"dialect", "<tool_call> JSON with a key of another meaning", `<tool_call>{"name": "read_file", "arguments": {"path": "/x"}, "then": "delete"}</tool_call>`, "", "", "", nil, ""},
		{"dialect", "<tool_call> function, typed by the schema", "<tool_call>\n<function=list_directory>\n<parameter=path>\n/src\n</parameter>\n<parameter=depth>\n2\n</parameter>\n</function>\n</tool_call>", "filesystem", "list_directory", `{"depth":2,"path":"/src"}`, []string{"dialect_function", "args_xml"}, ""},
		{"dialect", "<tool_call> function keeps a value's indentation", "<tool_call><function=filesystem__write_file><parameter=path>/a</parameter><parameter=content>\n  x = 1\n</parameter></function></tool_call>", "filesystem", "write_file", `{"content":"  x = 1","path":"/a"}`, []string{"dialect_function", "args_xml"}, ""},
		{"dialect", "<tool_call> function, a value not of its type", "<tool_call><function=list_directory><parameter=path>/src</parameter><parameter=depth>two</parameter></function></tool_call>", "", "", "", nil, ""},
		{"dialect", "<tool_call> function, a parameter given twice", "<tool_call><function=read_file><parameter=path>/a</parameter><parameter=path>/b</parameter></function></tool_call>", "", "", "", nil, ""},
		{"dialect", "<tool_call> function, a parameter the schema lacks", "<tool_call><function=read_file><parameter=file>/a</parameter></function></tool_call>", "", "", "", nil, ""},
		{"dialect", "a reply that is {\"tool\", \"params\"}", `{"tool": "read_file", "params": {"path": "/x"}}`, "filesystem", "read_file", `{"path":"/x"}`, []string{"dialect_json"}, ""},
		{"dialect", "a reply that is a fenced JSON call after thinking", "<think>read it</think>\n```json\n{\"tool\": \"everything__echo\", \"params\": {\"message\": \"hi\"}}\n```", "everything", "echo", `{"message":"hi"}`, []string{"fenced", "dialect_json"}, ""},
		{"dialect", "a JSON call beside prose", `To read it I would send {"tool": "read_file", "params": {"path": "/x"}}.`, "", "", "", nil, ""},
		{"dialect", "a JSON reply with another key", `{"tool": "read_file", "params": {"path": "/x"}, "confirm": false}`, "", "", "", nil, ""},
		{"dialect", "a <tool_call> example beside prose", "The call would be:\n```\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"/x\"}}</tool_call>\n```", "", "", "", nil, ""},
	}
}

// escapeHTML escapes markup as a model or proxy that escapes its output
// does.
func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// The near-miss table: every reply runs at the first attempt as the call
// it plainly means, or is fed back; none runs as another call.
func TestNearMissTable(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	cat := repairCatalog()
	type tally struct{ ran, fed, wrong int }
	byClass := map[string]*tally{}
	var classes []string
	for _, nm := range nearMisses() {
		if byClass[nm.class] == nil {
			byClass[nm.class] = &tally{}
			classes = append(classes, nm.class)
		}
		n := byClass[nm.class]
		t.Run(nm.class+"/"+nm.name, func(t *testing.T) {
			p := prepareNearMiss(ex, cat, nm)
			var ran []executor.Call
			for _, s := range p.Steps {
				if s.Err == nil {
					ran = append(ran, s.Call)
				}
			}
			switch {
			case p.Action == executor.ActRun && len(ran) > 0:
				c := ran[0]
				if len(ran) != 1 || c.Server != nm.server || c.Tool != nm.tool || c.ArgumentsJSON != nm.args {
					n.wrong++
					t.Fatalf("ran %d calls, first %s/%s %s; want %q", len(ran), c.Server, c.Tool, c.ArgumentsJSON, nm.server+"/"+nm.tool+" "+nm.args)
				}
				n.ran++
				if !slices.Equal(p.Repairs, nm.repairs) {
					t.Errorf("repairs %q, want %q", p.Repairs, nm.repairs)
				}
			default:
				n.fed++
				if nm.server != "" {
					t.Errorf("fed back (%v): %s\nwant it run as %s/%s %s", p.Action, feedbackOf(p), nm.server, nm.tool, nm.args)
				}
				if p.Action == executor.ActRun && feedbackOf(p) == "" {
					t.Errorf("nothing ran and no feedback")
				}
			}
		})
	}
	var b strings.Builder
	var all tally
	fmt.Fprintf(&b, "\n%-9s %5s %9s %8s %6s\n", "class", "cases", "ran first", "fed back", "wrong")
	for _, c := range classes {
		n := byClass[c]
		all.ran, all.fed, all.wrong = all.ran+n.ran, all.fed+n.fed, all.wrong+n.wrong
		fmt.Fprintf(&b, "%-9s %5d %9d %8d %6d\n", c, n.ran+n.fed+n.wrong, n.ran, n.fed, n.wrong)
	}
	fmt.Fprintf(&b, "%-9s %5d %9d %8d %6d", "all", all.ran+all.fed+all.wrong, all.ran, all.fed, all.wrong)
	t.Log(b.String())
	if all.wrong != 0 {
		t.Errorf("%d near misses ran as another call than meant", all.wrong)
	}
	if total := all.ran + all.fed + all.wrong; total < 24 {
		t.Errorf("the table has %d near misses, want at least 24", total)
	}
}

// BenchmarkNearMiss runs the near-miss table through Prepare: the time per
// reply, and how many ran at the first attempt, were fed back, or ran as
// another call than meant (which must stay 0).
func BenchmarkNearMiss(b *testing.B) {
	ex := executor.New(nil, executor.Options{})
	cat := repairCatalog()
	nms := nearMisses()
	var ran, fed, wrong int
	b.ResetTimer()
	for range b.N {
		ran, fed, wrong = 0, 0, 0
		for _, nm := range nms {
			p := prepareNearMiss(ex, cat, nm)
			var calls []executor.Call
			for _, s := range p.Steps {
				if s.Err == nil {
					calls = append(calls, s.Call)
				}
			}
			switch {
			case p.Action != executor.ActRun || len(calls) == 0:
				fed++
			case len(calls) == 1 && calls[0].Server == nm.server && calls[0].Tool == nm.tool && calls[0].ArgumentsJSON == nm.args:
				ran++
			default:
				wrong++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nms))/1000, "µs/reply")
	b.ReportMetric(float64(ran), "ran-first")
	b.ReportMetric(float64(fed), "fed-back")
	b.ReportMetric(float64(wrong), "wrong")
	b.ReportMetric(0, "ns/op")
	if wrong != 0 {
		b.Errorf("%d near misses ran as another call than meant", wrong)
	}
}

func feedbackOf(p executor.Plan) string {
	out := p.Feedback
	for _, s := range p.Steps {
		out += s.Feedback
	}
	return out
}

// A repaired call still asks for approval where it would have, and the
// approval shows the repaired arguments.
func TestRepairedCallIsApproved(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	p := ex.Prepare(repairCatalog(), toolcall.Parse(call("FILESYSTEM", "write_file", "<path>/a</path><content>x</content>")), false)
	if len(p.Steps) != 1 || p.Steps[0].Err != nil {
		t.Fatalf("steps %+v", p.Steps)
	}
	s := p.Steps[0]
	if !s.Approve {
		t.Errorf("repaired call to a tool not auto-approved runs without approval")
	}
	if got, want := s.Call.ArgumentsJSON, `{"content":"x","path":"/a"}`; got != want {
		t.Errorf("arguments for the approval %s, want %s", got, want)
	}
	if got, want := p.Repairs, []string{"name_case", "args_xml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("repairs %q, want %q", got, want)
	}
}

// Names resolve to a tool only when exactly one fits.
func TestRepairNames(t *testing.T) {
	cat := repairCatalog()
	cat.Servers = append(cat.Servers,
		mcpgram.ServerInfo{Name: "Web", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "fetch", InputSchema: json.RawMessage(`{}`)}}},
		mcpgram.ServerInfo{Name: "cased", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "Get", InputSchema: json.RawMessage(`{}`)}, {Name: "get", InputSchema: json.RawMessage(`{}`)}}},
	)
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	tests := []struct {
		name, server, tool string
		want               string // server/tool, or the problem
	}{
		{"exact name wins over case", "cased", "get", "cased/get"},
		{"two tools differ only in case", "cased", "GET", string(executor.ProblemAmbiguousTool)},
		{"exact server wins over case", "web", "fetch", "web/fetch"},
		{"two servers differ only in case", "WEB", "fetch", string(executor.ProblemUnknownServer)},
		{"joined name in another case", "", "CASED__get", "cased/get"},
		{"failed server in another case is not run", "Broken", "x", string(executor.ProblemUnknownServer)},
	}
	cat.Servers = append(cat.Servers, mcpgram.ServerInfo{Name: "broken", Status: mcpgram.StatusFailed})
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	ex := executor.New(nil, executor.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := onlyBlock(t, call(tc.server, tc.tool, "{}"))
			c, err := ex.Check(cat, b)
			got := c.Server + "/" + c.Tool
			if ce, ok := err.(*executor.CheckError); ok {
				got = string(ce.Problem)
			}
			if got != tc.want {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
	// A server still starting may have the tool: nothing is inferred.
	cat.Servers = append(cat.Servers, mcpgram.ServerInfo{Name: "zeta", Status: mcpgram.StatusStarting})
	if _, err := ex.Check(cat, onlyBlock(t, call("", "fetch", "{}"))); err == nil {
		t.Errorf("server inferred while another server is starting")
	}
}
