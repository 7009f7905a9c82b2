package mcptest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/mcptest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

type settings struct {
	MCPServers map[string]struct {
		Command     string            `json:"command"`
		Args        []string          `json:"args"`
		Env         map[string]string `json:"env"`
		Disabled    bool              `json:"disabled"`
		AutoApprove []string          `json:"autoApprove"`
	} `json:"mcpServers"`
}

// The default mcp-settings.json must start every enabled bundled server by
// its bare name (make run and the Docker image put bin/ on PATH), and
// auto-approve exactly the tools each one offers.
func TestDefaultSettings(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), "mcp-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s settings
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("mcp-settings.json: %v", err)
	}

	var enabled []string
	for name, srv := range s.MCPServers {
		if !srv.Disabled {
			enabled = append(enabled, name)
		}
	}
	sort.Strings(enabled)
	if want := []string{"calculator", "clock", "memory"}; !slices.Equal(enabled, want) {
		t.Errorf("enabled servers = %v, want %v", enabled, want)
	}

	for _, name := range enabled {
		srv := s.MCPServers[name]
		t.Run(name, func(t *testing.T) {
			if filepath.Base(srv.Command) != srv.Command {
				t.Fatalf("command %q is not a bare name found on PATH", srv.Command)
			}
			var env []string
			for k, v := range srv.Env {
				if k == "MEMORY_DB_PATH" {
					v = filepath.Join(t.TempDir(), v) // keep the relative default out of the tree
				}
				env = append(env, k+"="+v)
			}
			c := mcptest.Start(t, testenv.Bundled(t, srv.Command), env...)
			var tools []string
			for tool := range mcptest.Tools(t, c) {
				tools = append(tools, tool)
			}
			sort.Strings(tools)
			approved := slices.Sorted(slices.Values(srv.AutoApprove))
			if !slices.Equal(approved, tools) {
				t.Errorf("autoApprove = %v, want the server's tools %v", approved, tools)
			}
		})
	}

	fs, ok := s.MCPServers["filesystem"]
	if !ok || !fs.Disabled || fs.Command != "npx" {
		t.Fatalf("filesystem example = %+v, want a disabled npx entry", fs)
	}
	pinned := regexp.MustCompile(`^@modelcontextprotocol/server-filesystem@\d+\.\d+\.\d+$`)
	if !slices.ContainsFunc(fs.Args, pinned.MatchString) {
		t.Errorf("filesystem args %v do not pin a version", fs.Args)
	}
}
