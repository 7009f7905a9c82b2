package prompt_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The size of the tool section, measured on real servers: ours, the
// compact JSON Schema form this package wrote before the terse form, and
// Cline's rendering of the same tools. Sizes are in characters (runes);
// tokens are estimated as characters / 4, the usual rule of thumb for
// English and JSON with OpenAI-style tokenizers, not a tokenizer's count.

// A sizedServer is a real server to measure: how to start it.
type sizedServer struct {
	name    string
	command string
	args    []string
	env     map[string]string
}

// sizedServers returns the servers to measure; each entry starts its
// server when called, so that one that skips (no node) skips alone.
func sizedServers() []struct {
	name  string
	start func(testing.TB) sizedServer
} {
	bundled := func(name string, env func(testing.TB) map[string]string) func(testing.TB) sizedServer {
		return func(tb testing.TB) sizedServer {
			s := sizedServer{name: strings.TrimPrefix(name, "mcp-"), command: testenv.Bundled(tb, name)}
			if env != nil {
				s.env = env(tb)
			}
			return s
		}
	}
	return []struct {
		name  string
		start func(testing.TB) sizedServer
	}{
		{"everything", func(tb testing.TB) sizedServer {
			command, args := testenv.Everything(tb)
			return sizedServer{name: "everything", command: command, args: args}
		}},
		{"filesystem", func(tb testing.TB) sizedServer {
			node, dir := testenv.NPMPackage(tb, "@modelcontextprotocol/server-filesystem")
			return sizedServer{name: "filesystem", command: node, args: []string{filepath.Join(dir, "dist", "index.js"), tb.TempDir()}}
		}},
		{"calculator", bundled("mcp-calculator", nil)},
		{"clock", bundled("mcp-clock", nil)},
		{"memory", bundled("mcp-memory", func(tb testing.TB) map[string]string {
			return map[string]string{"MEMORY_DB_PATH": filepath.Join(tb.TempDir(), "memory.db")}
		})},
	}
}

// sizes are the tool sections of one server in the three renderings.
type sizes struct {
	cat                        mcpgram.Catalog
	tools                      int
	ours, json, cleaned, cline string
	// prose counts the characters of the tools' names and descriptions
	// and of their arguments' descriptions, which every rendering holds
	// whole (less a few line breaks): the rest is what the rendering costs.
	prose, prompt int
	// native is the native variant's prompt, nativeTools its functions
	// as the "tools" field sends them (compact JSON).
	native, nativeTools int
}

// measure starts s in a hub and on its own, and renders its tools.
func measure(tb testing.TB, s sizedServer) sizes {
	tb.Helper()
	entry := map[string]any{"command": s.command, "args": s.args, "env": s.env}
	path := testenv.WriteSettings(tb, tb.TempDir(), map[string]any{s.name: entry})
	h := testenv.StartHub(tb, path, hub.Options{NoWatch: true})
	testenv.Running(tb, h)
	cat := h.Catalog()
	p := prompt.Build(cat)
	info, _ := cat.Server(s.name)
	prose := 0
	for _, t := range info.Tools {
		var schema any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			tb.Fatalf("tool %s: schema: %v", t.Name, err)
		}
		prose += chars(t.Name) + chars(t.Description) + descriptions(schema)
	}
	return sizes{
		cat:         cat,
		tools:       len(info.Tools),
		ours:        toolSection(tb, p, s.name),
		json:        compactRendering(tb, info.Tools, false),
		cleaned:     compactRendering(tb, info.Tools, true),
		cline:       clineRendering(listTools(tb, s)),
		prose:       prose,
		prompt:      chars(p),
		native:      chars(prompt.BuildNative(cat)),
		nativeTools: chars(toolsField(tb, cat)),
	}
}

// toolsField is the "tools" field of a native request for cat, as the
// wire carries it.
func toolsField(tb testing.TB, cat mcpgram.Catalog) string {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var tools []tool
	for _, f := range prompt.Functions(cat).Functions {
		tools = append(tools, tool{"function", function{f.Name, f.Description, f.Parameters}})
	}
	b, err := json.Marshal(tools)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// descriptions counts the characters of the "description" strings of a
// schema, at any depth.
func descriptions(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if d, ok := e.(string); ok && k == "description" {
				n += chars(d)
			} else {
				n += descriptions(e)
			}
		}
	case []any:
		for _, e := range v {
			n += descriptions(e)
		}
	}
	return n
}

// toolSection cuts the list under "### Tools" of server name out of the
// prompt: the section's bytes exactly as the model gets them.
func toolSection(tb testing.TB, p, name string) string {
	tb.Helper()
	_, rest, ok := strings.Cut(p, "\n## "+name+"\n")
	if ok {
		_, rest, ok = strings.Cut(rest, "### Tools\n")
	}
	if !ok {
		tb.Fatalf("prompt has no tools for %s", name)
	}
	section, _, _ := strings.Cut(rest, "\n\n")
	return section + "\n"
}

// compactRendering is the tool list as this package wrote it before the
// terse form: each schema as compact JSON with sorted keys, less "$schema";
// with clean, also less the keys that carry nothing (as schema_test.go's
// normalize drops them), to tell what the terse form saves beyond that.
func compactRendering(tb testing.TB, tools []mcpgram.Tool, clean bool) string {
	tb.Helper()
	tools = slices.Clone(tools)
	slices.SortFunc(tools, func(a, b mcpgram.Tool) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, t := range tools {
		dec := json.NewDecoder(bytes.NewReader(t.InputSchema))
		dec.UseNumber()
		var s map[string]any
		if err := dec.Decode(&s); err != nil {
			tb.Fatalf("tool %s: schema: %v", t.Name, err)
		}
		delete(s, "$schema")
		if clean {
			normalize(s, t.Name, true, false)
		}
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(false)
		if err := e.Encode(s); err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "- %s", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(": " + strings.ReplaceAll(d, "\n", "\n    "))
		}
		fmt.Fprintf(&b, "\n    Input schema: %s", enc.String())
	}
	return b.String()
}

// clineRendering renders tools in the format of Cline's system prompt:
// "- name: description", then "Input Schema:" and the schema as the server
// sent it, pretty-printed with two spaces (as JSON.stringify(schema, null,
// 2) does) and indented four, tools in the server's order, a blank line
// between them. Our own code, written from the format, not Cline's.
func clineRendering(tools []rawTool) string {
	entries := make([]string, len(tools))
	for i, t := range tools {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, t.InputSchema, "", "  "); err != nil {
			pretty.Reset()
			pretty.Write(t.InputSchema)
		}
		entries[i] = fmt.Sprintf("- %s: %s\n    Input Schema:\n    %s", t.Name, t.Description,
			strings.ReplaceAll(pretty.String(), "\n", "\n    "))
	}
	return strings.Join(entries, "\n\n")
}

// A rawTool is a tool as the server lists it, schema bytes untouched (the
// hub's client normalises them).
type rawTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// listTools asks server s for its tools over stdio, as any MCP host does:
// initialize, initialized, then tools/list page by page.
func listTools(tb testing.TB, s sizedServer) []rawTool {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.command, s.args...)
	cmd.Env = os.Environ()
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", s.name, err)
	}
	defer func() {
		stdin.Close()
		cancel()
		_ = cmd.Wait() // killed by cancel if it outlives its closed stdin
	}()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 16<<20)
	call := func(id int, method string, params any) json.RawMessage {
		send(tb, stdin, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		for lines.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(lines.Bytes(), &m) != nil || m.ID == nil || *m.ID != id || m.Method != "" {
				continue // a notification, a log line or the server's own request
			}
			if m.Error != nil {
				tb.Fatalf("%s %s: %s", s.name, method, m.Error)
			}
			return m.Result
		}
		tb.Fatalf("%s %s: no answer: %v", s.name, method, lines.Err())
		return nil
	}
	call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcpgram-size-test", "version": "1"}})
	send(tb, stdin, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	var tools []rawTool
	params := map[string]any{}
	for id := 2; ; id++ {
		var page struct {
			Tools      []rawTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		if err := json.Unmarshal(call(id, "tools/list", params), &page); err != nil {
			tb.Fatalf("%s tools/list: %v", s.name, err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools
		}
		params = map[string]any{"cursor": page.NextCursor}
	}
}

func send(tb testing.TB, w interface{ Write([]byte) (int, error) }, msg any) {
	tb.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		tb.Fatalf("write to server: %v", err)
	}
}

func chars(s string) int { return utf8.RuneCountInString(s) }

func percent(a, b int) float64 { return 100 * float64(a) / float64(b) }

// TestPromptSize logs the tool section's size per real server in the
// three renderings, and holds ours to half of Cline's or less.
func TestPromptSize(t *testing.T) {
	for _, line := range strings.Split(prompt.Build(shapes()), "\n") {
		if strings.HasPrefix(line, `Under each tool, "Arguments:"`) {
			t.Logf("the legend of the terse form, once per prompt: %d chars (~%d tokens)", chars(line), chars(line)/4)
		}
	}
	for _, srv := range sizedServers() {
		t.Run(srv.name, func(t *testing.T) {
			s := measure(t, srv.start(t))
			ours, js, cleaned, cline := chars(s.ours), chars(s.json), chars(s.cleaned), chars(s.cline)
			t.Logf("%-10s %2d tools: terse %5d chars (~%4d tokens), compact JSON (before) %5d (~%4d), compact JSON less empty keys %5d (~%4d), Cline %5d (~%4d); terse/Cline %3.0f%%",
				srv.name, s.tools, ours, ours/4, js, js/4, cleaned, cleaned/4, cline, cline/4, percent(ours, cline))
			t.Logf("%-10s beyond the %4d chars of names and descriptions: terse %4d, compact JSON %4d, less empty keys %4d, Cline %4d; terse/Cline %3.0f%%; whole prompt %5d chars",
				srv.name, s.prose, ours-s.prose, js-s.prose, cleaned-s.prose, cline-s.prose, percent(ours-s.prose, cline-s.prose), s.prompt)
			t.Logf("%-10s native: prompt %5d chars + tools field %5d = %5d (~%4d tokens); XML prompt %5d (~%4d)",
				srv.name, s.native, s.nativeTools, s.native+s.nativeTools, (s.native+s.nativeTools)/4, s.prompt, s.prompt/4)
			if ours > cleaned || cleaned > js || js > cline {
				t.Errorf("%s: terse %d, compact JSON less empty keys %d, compact JSON %d, Cline %d: want them in that order", srv.name, ours, cleaned, js, cline)
			}
			if 2*(ours-s.prose) > cline-s.prose {
				t.Errorf("%s: the terse form costs %d characters beyond names and descriptions, more than half of Cline's %d", srv.name, ours-s.prose, cline-s.prose)
			}
			if srv.name == "everything" && ours*2 > cline {
				t.Errorf("tool section of %s is %d characters, more than half of Cline's %d:\n%s", srv.name, ours, cline, s.ours)
			}
		})
	}
}

// BenchmarkPrompt builds the prompt from each real server's catalog and
// reports the tool section's size beside Cline's (chars/4 for tokens).
func BenchmarkPrompt(b *testing.B) {
	for _, srv := range sizedServers() {
		b.Run(srv.name, func(b *testing.B) {
			m := measure(b, srv.start(b))
			for b.Loop() {
				prompt.Build(m.cat)
			}
			b.ReportMetric(float64(chars(m.ours)), "tool-chars")
			b.ReportMetric(float64(chars(m.ours))/4, "tool-tokens")
			b.ReportMetric(float64(chars(m.cline)), "cline-chars")
			b.ReportMetric(float64(chars(m.cline))/4, "cline-tokens")
		})
	}
}
