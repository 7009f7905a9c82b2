package hub_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// writeFile writes text to dir/name, making its folder.
func writeFile(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// What the settings file holds that the hub does not read is named, with
// its line and the field probably meant, and ignored rather than refused:
// a file shared with other hosts keeps working.
func TestSettingsWarnUnknownFields(t *testing.T) {
	t.Parallel()
	echo := testenv.TestServer(t, "echo")
	dir := t.TempDir()
	path := writeFile(t, dir, "mcp-settings.json", `{
  "mcpServers": {
    "echo": {
      "command": "`+echo+`",
      "disable": true,
      "alwaysAllow": ["echo"],
      "autoapprove": ["echo"],
      "colour": "blue"
    }
  },
  "mcpServer": {}
}
`, 0o600)
	h := testenv.StartHub(t, path, fastOptions())
	want := []string{
		path + `:5: server "echo": unknown field "disable" (did you mean "disabled"?): ignored`,
		path + `:6: server "echo": unknown field "alwaysAllow" (Cline's former name of "autoApprove": rename it): ignored`,
		path + `:7: server "echo": unknown field "autoapprove" (did you mean "autoApprove"?): ignored`,
		path + `:8: server "echo": unknown field "colour": ignored`,
		path + `:11: unknown key "mcpServer" (did you mean "mcpServers"?): ignored`,
	}
	if got := h.Warnings(); !slices.Equal(got, want) {
		t.Errorf("Warnings() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusRunning {
		t.Errorf("echo is %s (%s), want running: an unknown field is no reason to refuse it", s.Status, s.Error)
	}

	// A file with no server list at all says so.
	empty := writeFile(t, t.TempDir(), "mcp-settings.json", `{"mcpServer": {"echo": {"command": "`+echo+`"}}}`, 0o600)
	h = testenv.NewHub(t, empty, fastOptions())
	if got := h.Warnings(); len(got) != 2 || !strings.Contains(got[1], `no "mcpServers" (nor VS Code's "servers"): no server will start`) {
		t.Errorf("Warnings() = %q, want the typo and that no server will start", got)
	}
}

// VS Code's mcp.json ({"servers": {...}}, with "type": "stdio" or
// "http") is read as well; its "inputs" are not, and a server whose
// entry asks for one fails, saying what to write instead. "Always allow"
// writes into the list the server is in.
func TestVSCodeSettings(t *testing.T) {
	t.Parallel()
	echo := testenv.TestServer(t, "echo")
	dir := t.TempDir()
	path := writeFile(t, dir, "mcp.json", `{
  "inputs": [{"type": "promptString", "id": "token", "description": "Token", "password": true}],
  "servers": {
    "echo": {"type": "stdio", "command": "`+echo+`", "args": []},
    "asks": {"type": "stdio", "command": "`+echo+`", "env": {"TOKEN": "${input:token}"}},
    "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "disabled": true}
  }
}
`, 0o600)
	h := testenv.StartHub(t, path, fastOptions())
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusRunning {
		t.Fatalf("echo is %s (%s), want running", s.Status, s.Error)
	}
	if s := server(t, h, "asks"); s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, "${input:token} asks VS Code's user for a value") || !strings.Contains(s.Error, "${env:NAME}") {
		t.Errorf("asks: %s %q, want failed, saying to use ${env:NAME}", s.Status, s.Error)
	}
	if s := server(t, h, "remote"); s.Status != mcpgram.StatusDisabled {
		t.Errorf("remote is %s, want disabled", s.Status)
	}
	if w := h.Warnings(); len(w) != 1 || !strings.HasPrefix(w[0], path+`:2: "inputs" (VS Code's prompts for values) is not read`) {
		t.Errorf("Warnings() = %q, want one on inputs", w)
	}
	if err := h.AllowTool("echo", "echo"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"args": [], "autoApprove": ["echo"]}`) || strings.Contains(string(b), "mcpServers") {
		t.Errorf("after Always allow the file is\n%s\nwant the entry in servers patched", b)
	}
	if s := server(t, h, "echo"); !s.AutoApproves("echo") {
		t.Error("echo is not auto-approved after AllowTool")
	}
}

// Every relative path of an entry is relative to the folder the server
// runs in: the settings file's, unless its cwd says otherwise. So a
// command, an env value and a file it reads by a relative path are found
// wherever the bot runs from (here: this package's folder, not the
// settings file's), and the sandbox shows them where the server looks.
func TestEntryPathsFollowTheSettingsFile(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"off", "bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode != "off" {
				testenv.RequireSandbox(t, mode)
			}
			dir := testenv.OpenDir(t)
			needle := "beside-the-settings-" + mode
			writeFile(t, dir, "notes/a.txt", needle, 0o644)
			echo, err := os.ReadFile(testenv.TestServer(t, "echo"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "bin/echo-copy", string(echo), 0o755)
			path := testenv.WriteSettings(t, dir, map[string]any{
				"echo":    map[string]any{"command": "./bin/echo-copy", "sandbox": mode},
				"hostile": map[string]any{"command": testenv.TestServer(t, "hostile"), "env": map[string]string{"NOTES": "./notes/a.txt"}, "sandbox": mode},
			})
			h := testenv.StartHub(t, path, fastOptions())
			testenv.Running(t, h)
			if got := call(t, h, "echo", "cwd", nil).Text(); got != dir {
				t.Errorf("the server runs in %q, want the settings file's folder %q", got, dir)
			}
			rep := probe(t, h, "hostile", []string{needle}, []string{"./notes/a.txt"})
			r := rep.Results[len(rep.Results)-1]
			if r.Err != "" || len(r.Found) != 1 {
				t.Errorf("./notes/a.txt: %+v, want the file beside the settings file read", r)
			}
		})
	}
}
