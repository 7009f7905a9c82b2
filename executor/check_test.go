package executor_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

func testCatalog() mcpgram.Catalog {
	return mcpgram.Catalog{
		Version: 1,
		Servers: []mcpgram.ServerInfo{
			{Name: "broken", Status: mcpgram.StatusFailed, Error: "connect https://mcp.example/?key=SECRET: exit status 1", LastStderr: "token SECRET rejected"},
			{
				Name: "everything", Status: mcpgram.StatusRunning, AutoApprove: []string{"echo"},
				Tools: []mcpgram.Tool{
					{Name: "echo", Description: "Echoes back the input", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`)},
					{Name: "get-sum", Description: "Returns the sum of two numbers", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
					{Name: "mode", Description: "Sets a mode", InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"enum":["fast","slow"]}},"additionalProperties":false}`)},
					{Name: "shared", InputSchema: json.RawMessage(`{"type":"object"}`)},
				},
			},
			{
				Name: "notes", Status: mcpgram.StatusRunning,
				Tools: []mcpgram.Tool{
					{Name: "add_note", InputSchema: json.RawMessage(`{"type":"object"}`)},
					{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`)},
					{Name: "shared", InputSchema: json.RawMessage(`{"type":"object"}`)},
				},
			},
		},
	}
}

func tool(server, name, args string) string {
	return "<use_mcp_tool><server_name>" + server + "</server_name><tool_name>" + name + "</tool_name><arguments>" + args + "</arguments></use_mcp_tool>"
}

func onlyBlock(t *testing.T, s string) toolcall.Block {
	t.Helper()
	r := toolcall.Parse(s)
	if len(r.Blocks) != 1 {
		t.Fatalf("parse %q: got %d blocks, want 1", s, len(r.Blocks))
	}
	return r.Blocks[0]
}

func TestCheckAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want executor.Call
	}{
		{"tool call", tool("everything", "echo", `{"message": "hi"}`), executor.Call{
			Name: toolcall.UseMCPTool, Server: "everything", Tool: "echo",
			Arguments: map[string]any{"message": "hi"}, ArgumentsJSON: `{"message":"hi"}`,
		}},
		{"numbers kept exact", tool("everything", "get-sum", "```json\n{\"b\": 12345678901234567890, \"a\": 1.5}\n```"), executor.Call{
			Name: toolcall.UseMCPTool, Server: "everything", Tool: "get-sum",
			Arguments: map[string]any{"a": json.Number("1.5"), "b": json.Number("12345678901234567890")}, ArgumentsJSON: `{"a":1.5,"b":12345678901234567890}`,
		}},
		{"no arguments", "<use_mcp_tool><server_name>notes</server_name><tool_name>add_note</tool_name></use_mcp_tool>", executor.Call{
			Name: toolcall.UseMCPTool, Server: "notes", Tool: "add_note", Arguments: map[string]any{}, ArgumentsJSON: `{}`,
		}},
		{"uncompilable schema is not enforced", tool("notes", "bad_schema", `{"x": 1}`), executor.Call{
			Name: toolcall.UseMCPTool, Server: "notes", Tool: "bad_schema", Arguments: map[string]any{"x": json.Number("1")}, ArgumentsJSON: `{"x":1}`,
		}},
		{"server__tool form in tool_name", tool("everything", "everything__echo", `{"message": "hi"}`), executor.Call{
			Name: toolcall.UseMCPTool, Server: "everything", Tool: "echo",
			Arguments: map[string]any{"message": "hi"}, ArgumentsJSON: `{"message":"hi"}`, Repairs: []string{"name_joined"},
		}},
		{"unknown server, tool on one server", tool("note", "add_note", `{}`), executor.Call{
			Name: toolcall.UseMCPTool, Server: "notes", Tool: "add_note",
			Arguments: map[string]any{}, ArgumentsJSON: `{}`, Repairs: []string{"server_inferred"},
		}},
		{"dialect server__tool", "<mcp:tool>\nname: notes__shared\nparameters: {}\n</mcp:tool>", executor.Call{
			Name: toolcall.UseMCPTool, Server: "notes", Tool: "shared", Arguments: map[string]any{}, ArgumentsJSON: `{}`,
		}},
		{"dialect unique bare name", "<mcp:tool>\nname: get-sum\nparameters:\na: 1\nb: 2\n</mcp:tool>", executor.Call{
			Name: toolcall.UseMCPTool, Server: "everything", Tool: "get-sum",
			Arguments: map[string]any{"a": json.Number("1"), "b": json.Number("2")}, ArgumentsJSON: `{"a":1,"b":2}`,
		}},
		{"resource", "<access_mcp_resource><server_name>everything</server_name><uri>demo://x</uri></access_mcp_resource>", executor.Call{
			Name: toolcall.AccessMCPResource, Server: "everything", URI: "demo://x",
		}},
		{"question", `<ask_followup_question><question>Which?</question><options>["A", " B "]</options></ask_followup_question>`, executor.Call{
			Name: toolcall.AskFollowupQuestion, Question: "Which?", Options: []string{"A", "B"},
		}},
		{"question without options", `<ask_followup_question><question>Which?</question></ask_followup_question>`, executor.Call{
			Name: toolcall.AskFollowupQuestion, Question: "Which?",
		}},
		{"completion", `<attempt_completion><result>Done.</result></attempt_completion>`, executor.Call{
			Name: toolcall.AttemptCompletion, Result: "Done.",
		}},
	}
	ex := executor.New(nil, executor.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := onlyBlock(t, tc.in)
			got, err := ex.Check(testCatalog(), b)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			tc.want.Block = b
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// The depth bound counts objects and arrays, not brackets inside strings.
func TestCheckArgumentDepth(t *testing.T) {
	var c executor.Executor
	deep := strings.Repeat(`{"a":`, 64) + `"[[[[{{{{\\\"[["` + strings.Repeat("}", 64)
	if _, err := c.Check(testCatalog(), onlyBlock(t, tool("everything", "shared", deep))); err != nil {
		t.Errorf("64 levels with brackets in a string: %v, want accepted", err)
	}
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		problem executor.Problem
		want    []string // substrings of the feedback
	}{
		{"unknown server", tool("evrything", "ecko", `{}`), executor.ProblemUnknownServer,
			[]string{`There is no server "evrything".`, `Did you mean "everything"?`, "Running servers: everything, notes."}},
		{"unknown server, tool on two servers", tool("note", "shared", `{}`), executor.ProblemAmbiguousTool,
			[]string{`The tool "shared" could be any of: everything__shared, notes__shared.`}},
		{"failed server", tool("broken", "echo", `{}`), executor.ProblemUnknownServer,
			[]string{`Server "broken" is not running (failed).`, "Running servers: everything, notes."}},
		{"unknown tool", tool("everything", "ecko", `{}`), executor.ProblemUnknownTool,
			[]string{`Server "everything" has no tool "ecko"; did you mean "echo"?`, "Its tools: echo, get-sum, mode, shared."}},
		{"tool on another server", tool("everything", "add_note", `{}`), executor.ProblemUnknownTool,
			[]string{`A tool of that name is on server "notes".`}},
		{"invalid JSON", tool("everything", "echo", `{"message": "hi",,}`), executor.ProblemInvalidJSON,
			[]string{"invalid character ',' looking for beginning of object key string (line 1, column 18)", `The tool's input schema: {"properties":{"message":{"description":"Message to echo","type":"string"}},"required":["message"],"type":"object"}`}},
		{"unclosed JSON", tool("everything", "echo", "{\"message\": \n\"hi"), executor.ProblemInvalidJSON,
			[]string{"unexpected end of JSON input (line 2, column 4)"}},
		{"arguments nested 9,999 deep", tool("everything", "shared", `{"a":`+strings.Repeat("[", 9999)+strings.Repeat("]", 9999)+`}`), executor.ProblemInvalidJSON,
			[]string{"the arguments nest deeper than 64 levels of objects and arrays (line 1, column 69)"}},
		{"arguments one level too deep", tool("everything", "shared", strings.Repeat(`{"a":`, 65)+"1"+strings.Repeat("}", 65)), executor.ProblemInvalidJSON,
			[]string{"deeper than 64 levels"}},
		{"arguments over 1 MiB", tool("everything", "echo", `{"message": "`+strings.Repeat("x", 1<<20)+`"}`), executor.ProblemInvalidJSON,
			[]string{"the arguments are 1048591 bytes long; the limit is 1048576 (1 MiB)"}},
		{"JSON not an object", tool("everything", "echo", `["hi"]`), executor.ProblemInvalidJSON,
			[]string{"the arguments must be a JSON object, not an array"}},
		{"trailing text", tool("everything", "echo", `{"message":"a"} and more`), executor.ProblemInvalidJSON,
			[]string{"unexpected text after the JSON object"}},
		{"missing required", tool("everything", "echo", `{}`), executor.ProblemSchema,
			[]string{`The arguments for "echo" do not match its input schema:`, "- at /: missing property 'message'", `The tool's input schema: {"properties"`}},
		{"wrong types", tool("everything", "get-sum", `{"a": "1", "b": true}`), executor.ProblemSchema,
			[]string{"- at /a: got string, want number", "- at /b: got boolean, want number"}},
		{"not in enum", tool("everything", "mode", `{"mode": "medium", "x": 1}`), executor.ProblemSchema,
			[]string{`- at /mode: value must be one of 'fast', 'slow'`, "additional properties 'x' not allowed"}},
		{"missing server_name", "<use_mcp_tool><tool_name>nothing</tool_name></use_mcp_tool>", executor.ProblemMissingParam,
			[]string{"Missing value for required parameter 'server_name'.", "<server_name>server name</server_name>"}},
		{"missing tool_name", "<use_mcp_tool><server_name>everything</server_name><tool_name> </tool_name></use_mcp_tool>", executor.ProblemMissingParam,
			[]string{"Missing value for required parameter 'tool_name'."}},
		{"missing uri", "<access_mcp_resource><server_name>everything</server_name></access_mcp_resource>", executor.ProblemMissingParam,
			[]string{"Missing value for required parameter 'uri'."}},
		{"missing question", "<ask_followup_question><options>[\"a\",\"b\"]</options></ask_followup_question>", executor.ProblemMissingParam,
			[]string{"Missing value for required parameter 'question'."}},
		{"missing result", "<attempt_completion></attempt_completion>", executor.ProblemMissingParam,
			[]string{"Missing value for required parameter 'result'."}},
		{"options not JSON", "<ask_followup_question><question>q</question><options>A, B</options></ask_followup_question>", executor.ProblemInvalidOptions,
			[]string{"The options are not a JSON array of strings"}},
		{"one option", `<ask_followup_question><question>q</question><options>["A"]</options></ask_followup_question>`, executor.ProblemInvalidOptions,
			[]string{"The options must be 2 to 5 strings; got 1."}},
		{"six options", `<ask_followup_question><question>q</question><options>["1","2","3","4","5","6"]</options></ask_followup_question>`, executor.ProblemInvalidOptions,
			[]string{"got 6"}},
		{"option not a string", `<ask_followup_question><question>q</question><options>["A", 2]</options></ask_followup_question>`, executor.ProblemInvalidOptions,
			[]string{"Option 2 is not a non-empty string."}},
		{"incomplete", "<use_mcp_tool><server_name>everything</server_name>", executor.ProblemIncomplete,
			[]string{"The use_mcp_tool block was cut off before its closing tag </use_mcp_tool>."}},
		{"dialect ambiguous", "<mcp:tool>\nname: shared\n</mcp:tool>", executor.ProblemAmbiguousTool,
			[]string{`Several servers have a tool "shared": everything__shared, notes__shared.`}},
		{"dialect unknown", "<mcp:tool>\nname: everything__ecko\n</mcp:tool>", executor.ProblemUnknownTool,
			[]string{`No running server has a tool "everything__ecko". Did you mean "everything__echo"?`}},
		{"dialect no name", "<mcp:tool>\nparameters: {}\n</mcp:tool>", executor.ProblemMissingParam,
			[]string{`no "name: TOOL" line`}},
		{"dialect bad schema", "<mcp:tool>\nname: echo\nparameters: {\"message\": 3}\n</mcp:tool>", executor.ProblemSchema,
			[]string{"- at /message: got number, want string"}},
	}
	ex := executor.New(nil, executor.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := onlyBlock(t, tc.in)
			_, err := ex.Check(testCatalog(), b)
			var ce *executor.CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("got error %v, want a *CheckError", err)
			}
			if ce.Problem != tc.problem {
				t.Errorf("got problem %q, want %q", ce.Problem, tc.problem)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("feedback lacks %q:\n%s", w, err)
				}
			}
			// A failed server's reason and stderr can hold secrets.
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("feedback shows a server's failure detail:\n%s", err)
			}
		})
	}
}

func TestCheckNoServers(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	_, err := ex.Check(mcpgram.Catalog{}, onlyBlock(t, tool("x", "y", "{}")))
	if err == nil || !strings.Contains(err.Error(), "No MCP server is running") {
		t.Fatalf("got %v", err)
	}
}

// TestCheckSchemaCacheFollowsVersion: a changed schema under a new catalog
// version is enforced, not the one compiled for the old version.
func TestCheckSchemaCacheFollowsVersion(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	cat := testCatalog()
	b := onlyBlock(t, tool("everything", "echo", `{"message": "hi"}`))
	if _, err := ex.Check(cat, b); err != nil {
		t.Fatal(err)
	}
	cat.Version++
	cat.Servers[1].Tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"integer"}}}`)
	if _, err := ex.Check(cat, b); err == nil || !strings.Contains(err.Error(), "want integer") {
		t.Fatalf("got %v, want the new schema enforced", err)
	}
}

func TestFeedback(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	b := onlyBlock(t, tool("everything", "ecko", `{}`))
	_, err := ex.Check(testCatalog(), b)
	got := executor.Feedback(b, err)
	want := "[use_mcp_tool for 'ecko' on 'everything'] Error:\nServer \"everything\" has no tool \"ecko\"; did you mean \"echo\"? Its tools: echo, get-sum, mode, shared."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestNeedsApproval(t *testing.T) {
	cat := testCatalog()
	tests := []struct {
		name       string
		call       executor.Call
		approveAll bool
		want       bool
	}{
		{"auto-approved tool", executor.Call{Name: toolcall.UseMCPTool, Server: "everything", Tool: "echo"}, false, false},
		{"other tool", executor.Call{Name: toolcall.UseMCPTool, Server: "everything", Tool: "get-sum"}, false, true},
		{"approve all", executor.Call{Name: toolcall.UseMCPTool, Server: "everything", Tool: "get-sum"}, true, false},
		{"unknown server", executor.Call{Name: toolcall.UseMCPTool, Server: "nope", Tool: "echo"}, false, true},
		{"resource read not covered", executor.Call{Name: toolcall.AccessMCPResource, Server: "notes", URI: "x://y"}, false, true},
		{"resource read, exact entry", executor.Call{Name: toolcall.AccessMCPResource, Server: "docs", URI: "demo://exact"}, false, false},
		{"resource read, other URI", executor.Call{Name: toolcall.AccessMCPResource, Server: "docs", URI: "demo://exact2"}, false, true},
		{"resource read, prefix entry", executor.Call{Name: toolcall.AccessMCPResource, Server: "docs", URI: "file:///pub/a.txt"}, false, false},
		{"resource read outside the prefix", executor.Call{Name: toolcall.AccessMCPResource, Server: "docs", URI: "file:///etc/passwd"}, false, true},
		{"resource read, wildcard", executor.Call{Name: toolcall.AccessMCPResource, Server: "open", URI: "anything://at/all"}, false, false},
		{"resource read, approve all", executor.Call{Name: toolcall.AccessMCPResource, Server: "notes", URI: "x://y"}, true, false},
		{"tool entry does not cover a resource", executor.Call{Name: toolcall.AccessMCPResource, Server: "everything", URI: "echo"}, false, true},
		{"consent call, auto-approved tool", executor.Call{Name: toolcall.UseMCPTool, Server: "mem", Tool: "memory", Arguments: map[string]any{"operation": "store"}}, false, true},
		{"consent call, approve all", executor.Call{Name: toolcall.UseMCPTool, Server: "mem", Tool: "memory", Arguments: map[string]any{"operation": "store"}}, true, true},
		{"consent tool, other operation", executor.Call{Name: toolcall.UseMCPTool, Server: "mem", Tool: "memory", Arguments: map[string]any{"operation": "list"}}, false, false},
		{"consent tool, operation not a string", executor.Call{Name: toolcall.UseMCPTool, Server: "mem", Tool: "memory", Arguments: map[string]any{"operation": []any{"store"}}}, false, true},
		{"every call needs consent", executor.Call{Name: toolcall.UseMCPTool, Server: "mem", Tool: "send", Arguments: map[string]any{}}, true, true},
		{"tool on a restarting server", executor.Call{Name: toolcall.UseMCPTool, Server: "back", Tool: "echo"}, true, true},
		{"resource on a restarting server", executor.Call{Name: toolcall.AccessMCPResource, Server: "back", URI: "a://b"}, false, false},
		{"completion", executor.Call{Name: toolcall.AttemptCompletion}, false, false},
	}
	cat.Servers = append(cat.Servers,
		mcpgram.ServerInfo{Name: "back", Status: mcpgram.StatusRestarting, AutoApprove: []string{"echo", "resource:*"}},
		mcpgram.ServerInfo{Name: "docs", Status: mcpgram.StatusRunning, AutoApprove: []string{"resource:demo://exact", "resource:file:///pub/*"}},
		mcpgram.ServerInfo{Name: "mem", Status: mcpgram.StatusRunning, AutoApprove: []string{"memory", "send"}, Tools: []mcpgram.Tool{
			{Name: "memory", ConsentWhen: map[string][]string{"operation": {"store"}}},
			{Name: "send", ConsentWhen: map[string][]string{}},
		}},
		mcpgram.ServerInfo{Name: "open", Status: mcpgram.StatusRunning, AutoApprove: []string{"resource:*"}},
	)
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := executor.NeedsApproval(cat, tc.call, tc.approveAll); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // "" when fine
	}{
		{"plain answer", "The sum is 3. Use <b>bold</b> for emphasis.", ""},
		{"tool as tag", "<get-sum>\n{\"a\": 1, \"b\": 2}\n</get-sum>", "You wrote <get-sum> as a tag, so nothing was called."},
		{"server__tool as tag", "<notes__add_note>x</notes__add_note>", "<server_name>notes</server_name>\n<tool_name>add_note</tool_name>"},
		{"only an opening tag is prose", "An <echo> element", ""},
		{"unknown names are prose", "<memory>x</memory>", ""},
		{"parameters without wrapper", "<server_name>everything</server_name>\n<tool_name>echo</tool_name>", "outside a tool block, so nothing was called"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := executor.CheckText(testCatalog(), tc.text)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var ce *executor.CheckError
			if !errors.As(err, &ce) || ce.Problem != executor.ProblemMisformatted || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a misformatted error with %q", err, tc.want)
			}
		})
	}
}

// A call to a server on its way up is accepted without its tools, which are
// not known yet (the hub waits for the server, which judges the call); its
// arguments are still decoded and bounded.
func TestCheckServerComingUp(t *testing.T) {
	cat := testCatalog()
	cat.Servers = append(cat.Servers, mcpgram.ServerInfo{Name: "starting", Status: mcpgram.StatusStarting})
	slices.SortFunc(cat.Servers, func(a, b mcpgram.ServerInfo) int { return strings.Compare(a.Name, b.Name) })
	var c executor.Executor
	call, err := c.Check(cat, onlyBlock(t, tool("starting", "anything", `{"x": 1}`)))
	if err != nil || call.Server != "starting" || call.Tool != "anything" || call.ArgumentsJSON != `{"x":1}` {
		t.Errorf("got %+v, %v; want the call accepted as written", call, err)
	}
	if _, err := c.Check(cat, onlyBlock(t, tool("starting", "anything", strings.Repeat("[", 100)+strings.Repeat("]", 100)))); err == nil {
		t.Error("arguments 100 deep were accepted for a starting server")
	}
	if _, err := c.Check(cat, onlyBlock(t, tool("broken", "echo", `{}`))); err == nil || !strings.Contains(err.Error(), "not running (failed)") {
		t.Errorf("failed server: %v, want refused", err)
	}
}

func TestNativeFeedback(t *testing.T) {
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{{Name: "echo", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}}
	plan := executor.New(nil, executor.Options{}).Prepare(cat, toolcall.Parse("<use_mcp_tool><server_name>echo</server_name><arguments>{}</arguments></use_mcp_tool>"), false)
	fb := plan.Steps[0].Feedback
	got := executor.NativeFeedback(fb)
	if !strings.Contains(fb, "<use_mcp_tool>") || strings.Contains(got, "<") || !strings.Contains(got, "Missing value for required parameter 'tool_name'. Retry with the complete block.") {
		t.Errorf("NativeFeedback(%q) = %q", fb, got)
	}
}

// The foreign call syntaxes (a <tool_call> in neither of its dialects
// among them) are blocks, which the check refuses with feedback that
// asks for use_mcp_tool.
func TestForeignSyntax(t *testing.T) {
	for _, name := range []string{toolcall.ForeignToolCall, toolcall.ForeignFunctionCalls} {
		in := "Looking.\n<" + name + "><invoke name=\"echo\"><parameter name=\"message\">hi</parameter></invoke></" + name + ">"
		r := toolcall.Parse(in)
		if r.Text != "Looking." || len(r.Blocks) != 1 || r.Blocks[0].Name != name || !r.Blocks[0].Complete {
			t.Fatalf("Parse(%q) = %+v", in, r)
		}
		var ex executor.Executor
		_, err := ex.Check(testCatalog(), r.Blocks[0])
		if err == nil || !strings.Contains(err.Error(), "<"+name+"> format is not one this bot runs") || !strings.Contains(err.Error(), "<use_mcp_tool>") {
			t.Errorf("check of <%s>: %v", name, err)
		}
	}
}
