package prompt_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/prompt"
)

// native renders what a native call sends: the prompt and the functions,
// one a line, as the golden files hold them.
func native(cat mcpgram.Catalog, opts prompt.Options) string {
	var b strings.Builder
	b.WriteString(prompt.BuildNativeWith(cat, opts))
	b.WriteString("\n==== tools\n")
	for _, f := range prompt.Functions(cat).Functions {
		b.WriteString(f.Name + ": " + f.Description + "\n    " + string(f.Parameters) + "\n")
	}
	return b.String()
}

// The native prompt teaches no XML and lists no tools: they travel as
// functions. It still names the servers and their resources.
func TestNativeTeachesNoXML(t *testing.T) {
	got := prompt.BuildNative(withMemory())
	holdsNone(t, "native prompt", got, "<use_mcp_tool>", "<attempt_completion>", "<server_name>", "XML", "Echoes back the input string", "Second number", "Arguments:")
	holds(t, "native prompt", got, "## everything (2 tools)", "demo://resource/static/document/a.md", "demo://resource/dynamic/text/{resourceId}", "# Memory")
}

// The catalog's order and version change no byte of the prompt or the
// functions.
func TestNativeStable(t *testing.T) {
	want := native(catalog(), prompt.Options{})
	cat := catalog()
	cat.Version = 99
	slices.Reverse(cat.Servers)
	for i := range cat.Servers {
		slices.Reverse(cat.Servers[i].Tools)
	}
	if got := native(cat, prompt.Options{}); got != want {
		t.Error("native prompt or tools changed with catalog order or version")
	}
}

// Names are sanitised to what endpoints take, collisions get suffixes in
// a fixed order, and each maps back to its tool.
func TestFunctionNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	tool := func(name string) mcpgram.Tool {
		return mcpgram.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{
		{Name: "my.server", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{tool("read file"), tool("read/file"), tool("ünï"), tool(long), tool(long + "y")}},
		{Name: "my_server", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{tool("read_file")}},
		{Name: "x", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{tool("attempt_completion")}},
	}}
	ts := prompt.Functions(cat)
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	seen := map[string]bool{}
	for _, f := range ts.Functions {
		if !valid.MatchString(f.Name) || seen[f.Name] {
			t.Errorf("function name %q invalid or repeated", f.Name)
		}
		seen[f.Name] = true
		var p struct{ Type string }
		if err := json.Unmarshal(f.Parameters, &p); err != nil || p.Type != "object" {
			t.Errorf("%s: parameters %s", f.Name, f.Parameters)
		}
	}
	for _, c := range []struct{ name, server, tool string }{
		{"my_server__read_file", "my.server", "read file"},
		{"my_server__read_file_2", "my.server", "read/file"},
		{"my_server__read_file_3", "my_server", "read_file"},
		{"my_server___n_", "my.server", "ünï"},
		{"my_server__" + strings.Repeat("x", 53), "my.server", long},
		{"my_server__" + strings.Repeat("x", 51) + "_2", "my.server", long + "y"},
		{"x__attempt_completion", "x", "attempt_completion"},
		{"attempt_completion", "", "attempt_completion"},
	} {
		got, ok := ts.Target(c.name)
		if !ok || got != (prompt.Target{Server: c.server, Tool: c.tool}) {
			t.Errorf("Target(%q) = %+v, %v; want %s/%s", c.name, got, ok, c.server, c.tool)
		}
		if c.server != "" && ts.Name(c.server, c.tool) != c.name {
			t.Errorf("Name(%q, %q) = %q, want %q", c.server, c.tool, ts.Name(c.server, c.tool), c.name)
		}
	}
}
