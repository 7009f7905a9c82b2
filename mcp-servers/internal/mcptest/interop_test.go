package mcptest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// sdkPlan is what testdata/npm/sdk-client.mjs runs: one server, and the
// calls to make with the official TypeScript SDK client.
type sdkPlan struct {
	Command    string            `json:"command"`
	Args       []string          `json:"args,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	Cwd        string            `json:"cwd,omitempty"`
	ClientName string            `json:"clientName,omitempty"`
	Calls      []sdkCall         `json:"calls"`
}

type sdkCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type sdkResult struct {
	ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	Tools      []struct {
		Name     string         `json:"name"`
		Required []string       `json:"required"`
		Meta     map[string]any `json:"meta"`
	} `json:"tools"`
	Calls []struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"calls"`
}

// runSDK runs plan under the official SDK client. It skips, loudly, only
// where node or the pinned SDK is missing.
func runSDK(t *testing.T, plan sdkPlan) sdkResult {
	t.Helper()
	node, _ := testenv.NPMPackage(t, "@modelcontextprotocol/sdk")
	dir := filepath.Join(testenv.Root(t), "testdata", "npm")
	if plan.Env == nil {
		plan.Env = map[string]string{}
	}
	plan.Env["PATH"] = os.Getenv("PATH")
	in, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "sdk-client.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sdk client: %v\n%s", err, stderr.String())
	}
	var res sdkResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("sdk client output %q: %v", out.String(), err)
	}
	if len(res.Calls) != len(plan.Calls) {
		t.Fatalf("%d outcomes for %d calls", len(res.Calls), len(plan.Calls))
	}
	return res
}

// Each bundled server under the client Claude Desktop and Cline use: it
// initializes, lists its tools, and answers each tool with valid arguments
// as a result, with invalid ones as a tool error (isError), and a call of
// a tool it does not have with a JSON-RPC error, as the MCP spec says.
func TestOfficialClient(t *testing.T) {
	db := filepath.Join(t.TempDir(), "memory.db")
	tests := []struct {
		server string
		env    map[string]string
		tools  []string
		calls  []sdkCall
		want   []string // per call: part of the result text; "!" + part for a tool error
	}{
		{"mcp-calculator", nil, []string{"calculate"}, []sdkCall{
			{"calculate", map[string]any{"expression": "25 * 48 + 120 / 4"}},
			{"calculate", map[string]any{"expression": 42}},
			{"calculate", map[string]any{"expression": "7 // 2 + 100"}},
		}, []string{"1230", "!required", "!\"//\" at position 3"}},
		{"mcp-clock", nil, []string{"convert_time", "current_time"}, []sdkCall{
			{"current_time", map[string]any{"timezone": "Asia/Tokyo"}},
			{"convert_time", map[string]any{"time": "2026-03-14 15:30", "from_timezone": "Europe/Paris", "to_timezone": "America/New_York"}},
			{"current_time", map[string]any{"timezone": "Mars/Olympus"}},
			{"convert_time", map[string]any{"time": "noonish", "to_timezone": "UTC"}},
		}, []string{"Time zone: Asia/Tokyo", "2026-03-14", "!Unknown time zone", "!"}},
		{"mcp-memory", map[string]string{"MEMORY_DB_PATH": db, "MEMORY_USER": "me"}, []string{"memory"}, []sdkCall{
			{"memory", map[string]any{"operation": "store", "key": "wiki", "content": "The team wiki is at wiki.example"}},
			{"memory", map[string]any{"operation": "retrieve", "key": "wiki"}},
			{"memory", map[string]any{"operation": "store", "content": "I live at 12 Baker Street"}},
			{"memory", map[string]any{"operation": "fly"}},
			{"memory", map[string]any{"operation": "list"}},
		}, []string{`Stored memory "wiki"`, "wiki.example", "!without explicit permission", "!unknown operation", "1 memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			calls := append(tt.calls, sdkCall{"no_such_tool", map[string]any{}})
			res := runSDK(t, sdkPlan{Command: testenv.Bundled(t, tt.server), Env: tt.env, Cwd: t.TempDir(), Calls: calls})
			if res.ServerInfo.Name != tt.server {
				t.Errorf("serverInfo.name = %q, want %q", res.ServerInfo.Name, tt.server)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.tools, ",") {
				t.Errorf("tools = %v, want %v", names, tt.tools)
			}
			for i, want := range tt.want {
				got := res.Calls[i]
				wantErr := strings.HasPrefix(want, "!")
				if got.Error != nil || got.IsError != wantErr || !strings.Contains(got.Text, strings.TrimPrefix(want, "!")) {
					t.Errorf("call %d %v: got %+v, want isError %v and %q", i, tt.calls[i].Arguments, got, wantErr, want)
				}
			}
			last := res.Calls[len(res.Calls)-1]
			if last.Error == nil || last.Error.Code != -32602 || !strings.Contains(last.Error.Message, "no_such_tool") {
				t.Errorf("unknown tool: got %+v, want JSON-RPC error -32602 naming it", last)
			}
		})
	}
}

// Without MEMORY_USER, a host that names no user is refused with a message
// saying how to set it.
func TestOfficialClientMemoryWithoutUser(t *testing.T) {
	res := runSDK(t, sdkPlan{
		Command: testenv.Bundled(t, "mcp-memory"), Cwd: t.TempDir(),
		Env:   map[string]string{"MEMORY_DB_PATH": filepath.Join(t.TempDir(), "m.db")},
		Calls: []sdkCall{{"memory", map[string]any{"operation": "list"}}},
	})
	if c := res.Calls[0]; !c.IsError || !strings.Contains(c.Text, "MEMORY_USER") {
		t.Errorf("got %+v, want a refusal naming MEMORY_USER", c)
	}
	if m := res.Tools[0].Meta; m == nil || m["mcpgram/consent_when"] == nil {
		t.Errorf("the memory tool's _meta = %v, want mcpgram/consent_when", m)
	}
}

// The Claude Desktop and Cline snippets of mcp-servers/README.md work as
// written: each entry is run by the official client with its command, args
// and env, only the example home folder moved to a temp folder and the
// binaries put on PATH.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(testenv.Root(t), "mcp-servers", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	section = section[strings.Index(section, "## Using them elsewhere"):]
	section = section[:strings.Index(section, "\n## ")]
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 2 {
		t.Fatalf("found %d JSON snippets, want Claude Desktop's and Cline's", len(blocks))
	}
	binDir := filepath.Dir(testenv.Bundled(t, "mcp-memory"))
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for i, b := range blocks {
		home := t.TempDir()
		var file struct {
			MCPServers map[string]struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(b[1], "/home/me", home)), &file); err != nil {
			t.Fatalf("snippet %d: %v", i+1, err)
		}
		for name, entry := range file.MCPServers {
			plan := sdkPlan{Command: entry.Command, Args: entry.Args, Env: entry.Env, Cwd: t.TempDir()}
			if name == "memory" {
				plan.Calls = []sdkCall{
					{"memory", map[string]any{"operation": "store", "key": "k", "content": "Standups are at 9:30"}},
					{"memory", map[string]any{"operation": "retrieve", "key": "k"}},
				}
			}
			res := runSDK(t, plan)
			if len(res.Tools) == 0 {
				t.Errorf("snippet %d, %s: no tools", i+1, name)
			}
			for _, c := range res.Calls {
				if c.Error != nil || c.IsError {
					t.Errorf("snippet %d, %s: %+v", i+1, name, c)
				}
			}
		}
	}
}

// Each server reports the release version it was built as, the one
// `mcpgram version` prints: make build stamps them all alike.
func TestServersReportTheReleaseVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("SKIPPED LOUDLY: make is not installed")
	}
	const version = "v0.0.0-interop"
	bin := testenv.MakeBuild(t, version)
	out, err := exec.Command(filepath.Join(bin, "mcpgram"), "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "mcpgram "+version {
		t.Fatalf("mcpgram version = %q, %v", out, err)
	}
	for _, name := range []string{"mcp-memory", "mcp-calculator", "mcp-clock"} {
		res := runSDK(t, sdkPlan{Command: filepath.Join(bin, name), Cwd: t.TempDir(), Env: map[string]string{"MEMORY_DB_PATH": filepath.Join(t.TempDir(), "m.db")}})
		if res.ServerInfo.Version != version {
			t.Errorf("%s reports version %q, want %q", name, res.ServerInfo.Version, version)
		}
	}
}
