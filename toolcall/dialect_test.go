package toolcall_test

import (
	"encoding/json"
	"html"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/toolcall"
)

// A call in the reasoning is taken only when the reply's text has none
// and the reasoning exactly one distinct call.
func TestCallFromThinking(t *testing.T) {
	read := tool("fs", "read", `{"path": "/a"}`)
	tests := []struct {
		name, in, reasoning string
		want                string // the tool_name taken, "" when none
	}{
		{"a call in <think>", "<think>" + read + "</think>", "", "read"},
		{"a call in the reasoning channel", "Let me see.", read, "read"},
		{"the same call twice", "", read + " again " + read, "read"},
		{"a <tool_call> in the reasoning", "", `<tool_call>{"name": "fs__read"}</tool_call>`, "fs__read"},
		{"a JSON call that is the whole reasoning", "", `{"name": "fs__read", "arguments": {"path": "/a"}}`, "fs__read"},
		{"two different calls", "", read + tool("fs", "read", `{"path": "/b"}`), ""},
		{"a call in the text too", tool("fs", "write", "{}"), read, ""},
		{"a cut-off call", "", strings.TrimSuffix(read, "</use_mcp_tool>"), ""},
		{"an example in a fence", "", "```\n" + read + "\n```", ""},
		{"a completion is no call", "", "<attempt_completion><result>x</result></attempt_completion>", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := toolcall.Parse(tc.in)
			r.Thinking = strings.TrimSpace(tc.reasoning + "\n" + r.Thinking)
			before := len(r.Blocks)
			got, ok := r.CallFromThinking()
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v, blocks %+v", ok, got.Blocks)
			}
			if !ok {
				if len(got.Blocks) != before {
					t.Errorf("blocks changed: %+v", got.Blocks)
				}
				return
			}
			b := got.Blocks[0]
			if len(got.Blocks) != 1 || b.Params["tool_name"] != tc.want || b.Repairs[0] != toolcall.RepairReasoning || got.Text != r.Text {
				t.Errorf("got %+v, text %q", got.Blocks, got.Text)
			}
		})
	}
}

// DecodeArguments reads the function form's parameters by the schema's
// types, and says which one does not fit.
func TestDecodeParameters(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"typed", "<parameter=path>/x</parameter><parameter=depth>\n3\n</parameter><parameter=recursive>true</parameter><parameter=tags>[\"a\"]</parameter>", `{"depth":3,"path":"/x","recursive":true,"tags":["a"]}`, ""},
		{"a string keeps its inner space", "<parameter=path>\n  /x y \n</parameter>", `{"path":"  /x y "}`, ""},
		{"entities are the value's", "<parameter=path>a &amp; b</parameter>", `{"path":"a \u0026amp; b"}`, ""},
		{"not an integer", "<parameter=path>/x</parameter><parameter=depth>3.5</parameter>", "", `"3.5" for "depth" is not a JSON integer`},
		{"not in the schema", "<parameter=file>/x</parameter>", "", `has no property "file"`},
		{"given twice", "<parameter=path>/x</parameter><parameter=path>/y</parameter>", "", "each name once"},
		{"text between", "<parameter=path>/x</parameter> and <parameter=depth>1</parameter>", "", "each name once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, kinds, err := toolcall.DecodeArguments(tc.in, listSchema, true)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, %v; want an error with %q", args, err, tc.err)
				}
				return
			}
			got, _ := json.Marshal(args)
			if err != nil || string(got) != tc.want || !slices.Equal(kinds, []string{toolcall.RepairArgsXML}) {
				t.Errorf("got %s %q %v, want %s", got, kinds, err, tc.want)
			}
		})
	}
}

// A call written in a dialect, with any tool name and string argument,
// reads back as written: the <tool_call> JSON and the function form,
// escaped or not.
func FuzzDialectRoundTrip(f *testing.F) {
	f.Add("echo", "message", "hi")
	f.Add("server__tool", "path", "  indented\n\tcode ")
	f.Add("a.b", "q", `"quoted" <b> & </parameter`)
	f.Fuzz(func(t *testing.T, name, key, value string) {
		name = strings.TrimSpace(name)
		if name == "" || !utf8.ValidString(name) || !utf8.ValidString(value) || strings.ContainsAny(name, "<>\n&\"\\") ||
			!isKey(key) || slices.Contains([]string{"use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion"}, name) {
			return
		}
		schema := json.RawMessage(`{"type":"object","properties":{` + mustJSON(key) + `:{"type":"string"}}}`)
		body, _ := json.Marshal(map[string]any{"name": name, "arguments": map[string]string{key: value}})
		forms := map[string]string{
			"json":         "<tool_call>" + string(body) + "</tool_call>",
			"json escaped": "&lt;tool_call&gt;" + html.EscapeString(string(body)) + "&lt;/tool_call&gt;",
			"whole reply":  string(body),
		}
		// A value ending in \r cannot be told from one before a CRLF line
		// break.
		if !strings.Contains(value, "</parameter>") && !strings.HasSuffix(value, "\r") {
			forms["function"] = "<tool_call><function=" + name + "><parameter=" + key + ">\n" + value + "\n</parameter></function></tool_call>"
		}
		for form, in := range forms {
			r := toolcall.Parse(in)
			if len(r.Blocks) != 1 {
				t.Fatalf("%s: %q gave %d blocks", form, in, len(r.Blocks))
			}
			b := r.Blocks[0]
			if b.Name != toolcall.UseMCPTool || b.Params["tool_name"] != name || !b.Complete || r.Text != "" {
				t.Fatalf("%s: %q gave %+v, text %q", form, in, b, r.Text)
			}
			args, _, err := toolcall.DecodeArguments(b.Params["arguments"], schema, true)
			if err != nil || !reflect.DeepEqual(args, map[string]any{key: value}) {
				t.Fatalf("%s: %q: arguments %v (%v), want %q: %q", form, in, args, err, key, value)
			}
		}
	})
}

// Whatever a <tool_call>, a JSON reply or thinking holds, the parser does
// not panic, and a block it makes of it is one the check can take: a
// dialect's names its tool, a foreign one holds nothing, and a call taken
// from thinking is complete and says so.
func FuzzDialects(f *testing.F) {
	for _, s := range []string{`{"name": "echo", "arguments": {"a": 1}}`, `{"tool": "x", "params": "{}"}`, "<function=f><parameter=a>1</parameter></function>",
		`{“name”: “e”,}`, "<function=f>", `{"name": "a", "name": "b"}`, `{"name": "use_mcp_tool", "arguments": {"server_name": 1}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, in := range []string{"<tool_call>" + body + "</tool_call>", body, "&lt;tool_call&gt;" + html.EscapeString(body) + "&lt;/tool_call&gt;", "<think>" + body + "</think>"} {
			r := toolcall.Parse(in)
			for _, b := range r.Blocks {
				switch {
				case b.Dialect != "" && b.Complete && (b.Name != toolcall.UseMCPTool || b.Params["tool_name"] == ""):
					t.Fatalf("%q: dialect block %+v names no tool", in, b)
				case toolcall.Foreign(b.Name) && len(b.Params) != 0:
					t.Fatalf("%q: foreign block %+v has parameters", in, b)
				}
				if b.Dialect == toolcall.DialectFunction {
					_, _, _ = toolcall.DecodeArguments(b.Params["arguments"], listSchema, true)
				}
			}
			if got, ok := r.CallFromThinking(); ok {
				b := got.Blocks[0]
				if len(got.Blocks) != 1 || !b.Complete || b.Repairs[0] != toolcall.RepairReasoning {
					t.Fatalf("%q: call from thinking %+v", in, got.Blocks)
				}
			}
		}
	})
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// isKey is what the function form and the argument forms take as a name.
func isKey(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c == '-' || c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}
