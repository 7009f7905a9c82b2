package hub_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The default bounds are several times what the bundled servers and the
// popular npm servers take in normal use: each is started, sandboxed as
// by default, made to work (a few of its tools called), and its processes
// measured together, as the hub measures them against the bounds. The
// figures it logs are docs/benchmarks.md's ("What servers take"): go test
// -run TestDefaultBoundsFit -v ./hub. Not parallel: it measures.
func TestDefaultBoundsFit(t *testing.T) {
	node, everything := testenv.NPMPackage(t, "@modelcontextprotocol/server-everything")
	_, filesystem := testenv.NPMPackage(t, "@modelcontextprotocol/server-filesystem")
	_, memory := testenv.NPMPackage(t, "@modelcontextprotocol/server-memory")
	_, thinking := testenv.NPMPackage(t, "@modelcontextprotocol/server-sequential-thinking")
	files := testenv.OpenDir(t)
	own := testenv.OpenDir(t)
	servers := []struct {
		name  string
		entry map[string]any
		calls []toolCall
	}{
		{"mcp-memory", map[string]any{"command": testenv.Bundled(t, "mcp-memory"), "env": map[string]string{"MEMORY_DB_PATH": filepath.Join(own, "memory", "memory.db"), "MEMORY_USER": "me"}},
			[]toolCall{{"memory", map[string]any{"operation": "list"}}, {"memory", map[string]any{"operation": "search", "query": "tea"}}}},
		{"mcp-calculator", map[string]any{"command": testenv.Bundled(t, "mcp-calculator")},
			[]toolCall{{"calculate", map[string]any{"expression": "2^64 / 3"}}}},
		{"mcp-clock", map[string]any{"command": testenv.Bundled(t, "mcp-clock")},
			[]toolCall{{"current_time", map[string]any{"timezone": "Europe/Paris"}}}},
		{"server-everything", map[string]any{"command": node, "args": []string{filepath.Join(everything, "dist", "index.js"), "stdio"}},
			[]toolCall{{"echo", map[string]any{"message": "hi"}}, {"get-sum", map[string]any{"a": 1, "b": 2}}, {"get-tiny-image", map[string]any{}}}},
		{"server-filesystem", map[string]any{"command": node, "args": []string{filepath.Join(filesystem, "dist", "index.js"), files}},
			[]toolCall{{"write_file", map[string]any{"path": filepath.Join(files, "a.txt"), "content": "hello"}}, {"list_directory", map[string]any{"path": files}}}},
		{"server-memory", map[string]any{"command": node, "args": []string{filepath.Join(memory, "dist", "index.js")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(own, "graph", "memory.jsonl")}},
			[]toolCall{{"create_entities", map[string]any{"entities": []any{map[string]any{"name": "tea", "entityType": "drink", "observations": []any{"liked"}}}}}, {"read_graph", map[string]any{}}}},
		{"sequential-thinking", map[string]any{"command": node, "args": []string{filepath.Join(thinking, "dist", "index.js")}},
			[]toolCall{{"sequentialthinking", map[string]any{"thought": "one", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}}}},
	}
	entries := map[string]any{}
	for _, s := range servers {
		entries[s.name] = s.entry
	}
	h, _ := startHub(t, entries)
	d := hub.DefaultBounds
	for _, s := range servers {
		for _, c := range s.calls {
			call(t, h, s.name, c.tool, c.args)
		}
		tasks, rss := h.Usage(s.name)
		t.Logf("%-20s %3d processes and threads, %6.1f MiB resident (sandbox %s)", s.name, tasks, float64(rss)/(1<<20), server(t, h, s.name).Sandbox)
		if tasks == 0 || rss == 0 {
			t.Errorf("%s: measured nothing", s.name)
		}
		if tasks*4 > d.Processes || rss*4 > d.Memory {
			t.Errorf("%s takes %d processes and threads and %s: within a quarter of the defaults (%d, %s) it is not", s.name, tasks, fmt.Sprint(rss>>20)+" MiB", d.Processes, fmt.Sprint(d.Memory>>20)+" MiB")
		}
	}
}

// A toolCall is a tool to call with its arguments.
type toolCall struct {
	tool string
	args map[string]any
}
