package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// An attackResult is what one attack of hub/testdata/hostile got.
type attackResult struct {
	Target string `json:"target"`
	Err    string `json:"err"`
	Bytes  int    `json:"bytes"`
	Info   string `json:"info"`
}

// The sandbox tried as an attacker would, by the real binary as root, the
// way CI and many operators run it: a hostile server set up as the shipped
// memory server is (a folder of its own in the bot's data folder) tries,
// one `mcpgram mcp call` at a time, each way out the last review found.
// Each is refused or bounded: /proc/sys cannot be opened for writing; a
// symlink it leaves is refused at its next start and widens nothing; a
// journal planted for the bot's database and a user's photo are out of
// reach; a fork storm and a full /tmp stop at its bounds; and another
// server's npm cache is out of reach. Where bubblewrap or root is missing
// the test skips, loudly (testenv.RequireSandbox; CI has both).
func TestHostileServerByTheRealBinary(t *testing.T) {
	testenv.RequireSandbox(t, "bubblewrap")
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the tests do not run as root, so the attacks a root bot invites cannot be tried")
	}
	t.Parallel()
	b := buildBinary(t)
	data := filepath.Join(b.dir, "data")
	db, photo := filepath.Join(data, "mcpgram.db"), filepath.Join(data, "media", "photo.jpg")
	outside := testenv.OpenDir(t)
	for path, content := range map[string]string{db: "SQLite format 3\x00the bot's", photo: "a user's photo"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hostile := testenv.TestServer(t, "hostile")
	npx := filepath.Join(b.dir, "bin", "npx") // the hostile server under the name of npx
	if err := os.MkdirAll(filepath.Dir(npx), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hostile, npx); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(data, "hostile")
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"hostile": map[string]any{"command": hostile, "env": map[string]string{"HOSTILE_DB_PATH": "./data/hostile/hostile.db"}, "limits": map[string]any{"processes": 64, "tmp": "16MiB"}},
		"npx":     map[string]any{"command": npx},
		"npx-too": map[string]any{"command": npx},
	})
	env := []string{"DATABASE_PATH=" + db, "MCP_CACHE_DIR=" + filepath.Join(b.dir, "caches")}
	attack := func(server, what, path, target string, n int) attackResult {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"what": what, "path": path, "target": target, "n": n})
		stdout, stderr, code := b.run(env, "--mcp-settings", settings, "mcp", "call", server, "attack", string(args))
		// A refused attack is the tool's error: on stderr after
		// "error:", exit 1.
		out := stdout
		if _, after, ok := strings.Cut(stderr, "error:\n"); code == 1 && ok {
			out, _, _ = strings.Cut(after, "\n")
		} else if code != 0 && strings.Contains(stderr, "went past its processes bound") {
			// A fork storm slower than the hub's look at the server's
			// processes (a loaded machine) is ended by the hub, not the
			// kernel: bounded all the same.
			return attackResult{Err: stderr}
		} else if code != 0 {
			t.Fatalf("attack %s: exit %d\n%s\n%s", what, code, stdout, stderr)
		}
		var r attackResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("attack %s: %v\n%s", what, err, stdout)
		}
		return r
	}

	if r := attack("hostile", "whoami", "", "", 0); strings.HasPrefix(r.Info, "uid=0 ") || !strings.Contains(r.Info, "0000000000000000") {
		t.Errorf("whoami: %s, want a user of its own and no capability", r.Info)
	}
	if r := attack("hostile", "procsys", "", "", 0); r.Info != "" {
		t.Errorf("opened for writing: %s", r.Info)
	}
	for _, a := range []struct{ what, path string }{{"plant", db + "-journal"}, {"write", photo}, {"plant", filepath.Join(data, "media", "new.jpg")}} {
		if r := attack("hostile", a.what, a.path, "", 0); r.Err == "" {
			t.Errorf("%s %s: done, want it refused", a.what, a.path)
		}
	}
	if r := attack("hostile", "forks", "", "", 200); r.Bytes >= 72 || r.Err == "" {
		t.Errorf("a fork storm: %d started (%s), want the kernel to refuse it by 72 (64 and an eighth)", r.Bytes, r.Err)
	}
	if r := attack("hostile", "fill", "/tmp/full", "", 0); r.Bytes > 16<<20 || !strings.Contains(r.Err, "no space") {
		t.Errorf("filling /tmp: %d bytes (%s), want at most 16 MiB, then no space", r.Bytes, r.Err)
	}
	cache := attack("npx-too", "env", "npm_config_cache", "", 0).Info
	if cache == "" || cache == attack("npx", "env", "npm_config_cache", "", 0).Info {
		t.Errorf("npx-too's cache %q: want one of its own", cache)
	}
	if r := attack("npx", "plant", filepath.Join(cache, "_npx", "index.js"), "", 0); r.Err == "" {
		t.Errorf("npx rewrote npx-too's cache")
	}
	// Last, as it ends the server: a link where its entry names its file.
	if r := attack("hostile", "symlink", filepath.Join(own, "hostile.db"), outside, 0); r.Err != "" {
		t.Fatalf("leaving a link: %s", r.Err)
	}
	stdout, stderr, code := b.run(env, "--mcp-settings", settings, "mcp", "call", "hostile", "attack", `{"what": "whoami"}`)
	if code == 0 || !strings.Contains(stderr, filepath.Join(own, "hostile.db")+" is a symbolic link") {
		t.Errorf("after leaving a link: exit %d\n%s\n%s\nwant it refused, naming the link", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("the folder the link points to holds %d entries", len(entries))
	}
}
