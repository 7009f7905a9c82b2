package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A Claude Desktop file of popular npx servers, as its users write one
// (testdata/claude-desktop), runs in the sandbox with no edit, by the real
// binary: the filesystem server over a folder of the home folder, the
// memory server (which keeps its graph beside its package, in the npx
// cache that is the server's own), sequential thinking and everything.
// One server installed by hand and started as `node …/dist/index.js`
// runs too, but may not write its graph beside its package: its failed
// call says that the sandbox refused the write, and how to allow it. (No
// uvx server: PyPI is out of reach here.) npx needs the npm registry or a
// warm cache; where npx is missing the test skips, loudly.
func TestClaudeDesktopFileRunsSandboxed(t *testing.T) {
	testenv.RequireSandbox(t, "bubblewrap")
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("SKIPPED LOUDLY: npx is not installed")
	}
	testenv.NPMPackage(t, "@modelcontextprotocol/server-memory") // the one installed by hand
	t.Parallel()
	b := buildBinary(t)
	settings := filepath.Join(testenv.Root(t), "testdata", "claude-desktop", "claude_desktop_config.json")
	docs := filepath.Join(b.dir, "Documents")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	// Kept between runs, so that npx downloads each package once.
	env := []string{"MCP_CACHE_DIR=" + testenv.CacheDir(), "MCP_SANDBOX=required"}
	stdout, stderr, code := b.run(env, "--mcp-settings", settings, "mcp", "list")
	if code != 0 {
		t.Fatalf("mcp list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, name := range []string{"filesystem", "memory", "sequential-thinking", "everything", "memory-installed"} {
		if line := lineOf(stdout, name); !strings.Contains(line, "running") || !strings.Contains(line, "sandboxed (bubblewrap)") {
			t.Errorf("%s: %q, want it running, sandboxed", name, line)
		}
	}
	call := func(server, tool, args string) (string, string, int) {
		t.Helper()
		return b.run(env, "--mcp-settings", settings, "mcp", "call", server, tool, args)
	}
	note := filepath.Join(docs, "note.txt")
	if out, errOut, code := call("filesystem", "write_file", `{"path": "`+note+`", "content": "from the sandbox"}`); code != 0 {
		t.Errorf("filesystem write_file: exit %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(note); string(got) != "from the sandbox" {
		t.Errorf("%s holds %q", note, got)
	}
	graph := `{"entities": [{"name": "tea", "entityType": "drink", "observations": ["liked"]}]}`
	if out, errOut, code := call("memory", "create_entities", graph); code != 0 {
		t.Errorf("memory create_entities: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := call("sequential-thinking", "sequentialthinking", `{"thought": "one", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}`); code != 0 {
		t.Errorf("sequential thinking: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, code := call("everything", "echo", `{"message": "desktop"}`); code != 0 || !strings.Contains(out, "desktop") {
		t.Errorf("everything echo: exit %d, %q", code, out)
	}
	out, errOut, code := call("memory-installed", "create_entities", graph)
	if code == 0 || !strings.Contains(out+errOut, "its sandbox let it not write") || !strings.Contains(out+errOut, `"sandbox": {"paths"`) {
		t.Errorf("memory-installed create_entities: exit %d\n%s\n%s\nwant it refused, saying the sandbox refused the write and how to allow it", code, out, errOut)
	}
}
