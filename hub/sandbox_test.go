package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A probeReport is what hub/testdata/hostile found.
type probeReport struct {
	PPID    int `json:"ppid"`
	Results []struct {
		Target string   `json:"target"`
		Err    string   `json:"err"`
		Bytes  int      `json:"bytes"`
		Found  []string `json:"found"`
		Info   string   `json:"info"`
	} `json:"results"`
}

// probe calls the hostile server srv's probe and decodes its report.
func probe(t *testing.T, h *hub.Hub, srv string, needles, files []string) probeReport {
	t.Helper()
	res := call(t, h, srv, "probe", map[string]any{"needles": needles, "files": files})
	var rep probeReport
	if err := json.Unmarshal([]byte(res.Text()), &rep); err != nil {
		t.Fatalf("probe: %v: %s", err, res.Text())
	}
	return rep
}

// A botDir is a bot's folder as a deployment has it: a settings file, a
// .env, a secret file, and a data folder that holds the bot's database
// and media beside a folder of a server's own (as the memory server's
// data/memory). The secrets hold needle.
type botDir struct {
	dir, settings, env, secret, db, media, visible string
	// own is the server's own folder; elsewhere is a file no entry names,
	// in another folder of /tmp.
	own, elsewhere string
	needle         string
}

func newBotDir(t *testing.T, name string) botDir {
	t.Helper()
	d := testenv.OpenDir(t)
	b := botDir{
		dir: d, needle: "needle-" + name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		env: filepath.Join(d, ".env"), secret: filepath.Join(d, "secrets", "telegram_token"),
		db: filepath.Join(d, "data", "mcpgram.db"), media: filepath.Join(d, "data", "media"),
		own: filepath.Join(d, "data", "hostile"), visible: filepath.Join(d, "data", "hostile", "notes.txt"),
		elsewhere: filepath.Join(testenv.OpenDir(t), "elsewhere.txt"),
	}
	for path, content := range map[string]string{
		b.env: "OPENAI_API_KEY=" + b.needle + "\n", b.secret: b.needle,
		b.db: "SQLite format 3\x00" + b.needle, filepath.Join(b.media, "photo.jpg"): b.needle,
		b.visible: "the server's own notes", filepath.Join(b.own, "hostile.db"): "", b.elsewhere: "someone else's",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		// Readable by all, but for the secrets: the sandbox, not the
		// file's mode, must keep them from a server.
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// protected is what the bot keeps from every server, as cmd/mcpgram
// lists it.
func (b *botDir) protected() []string {
	return []string{b.env, b.secret, b.db, b.db + "-wal", b.db + "-shm", b.db + "-journal", b.media}
}

// start starts a hub over entries, with b's paths protected.
func (b *botDir) start(t *testing.T, entries map[string]any) *hub.Hub {
	t.Helper()
	b.settings = testenv.WriteSettings(t, b.dir, entries)
	opts := fastOptions()
	opts.Protected = b.protected()
	return testenv.StartHub(t, b.settings, opts)
}

// hostile starts the hostile server in mode, with its own file named in
// its own folder beside the bot's data, as the memory server's is, and
// returns what its probe found, and the server's state.
func (b *botDir) hostile(t *testing.T, mode string) (probeReport, mcpgram.ServerInfo) {
	t.Helper()
	h := b.start(t, map[string]any{"hostile": map[string]any{
		"command": testenv.TestServer(t, "hostile"),
		"env":     map[string]string{"HOSTILE_DB_PATH": filepath.Join(b.own, "hostile.db")},
		"sandbox": mode,
	}})
	rep := probe(t, h, "hostile", []string{b.needle}, []string{b.db, filepath.Join(b.media, "photo.jpg"), b.settings, b.env, b.secret, b.visible, b.elsewhere, "/etc/shadow"})
	return rep, server(t, h, "hostile")
}

// A server is a stranger: in its sandbox, the hostile server finds no
// secret of the process that started it, neither in its environment and
// memory nor in any environment it can see, and cannot read the bot's
// database, settings, .env or secret file, /etc/shadow or a file no entry
// names, while it reads its own files beside the database; under
// bubblewrap it holds no capability, even where the bot runs as root. With the sandbox off the same reads succeed, as
// they would for any server: this test's process is the bot here, and
// the needle lies in its memory.
func TestSandboxHidesTheBot(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock", "off"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode != "off" {
				testenv.RequireSandbox(t, mode)
			}
			b := newBotDir(t, mode)
			rep, info := b.hostile(t, mode)
			if mode == "off" {
				checkExposed(t, b, rep)
				return
			}
			if info.Sandbox != mode {
				t.Errorf("Sandbox = %q, want %q", info.Sandbox, mode)
			}
			for _, r := range rep.Results {
				switch {
				case r.Target == "capabilities":
					if (mode == "bubblewrap" || os.Geteuid() == 0) && r.Info != "0000000000000000" {
						t.Errorf("the server holds capabilities %s, want none", r.Info)
					}
				case strings.HasPrefix(r.Target, "kill "):
					// bubblewrap's server sees its own init, not the
					// bot; Landlock refuses from ABI 6.
					if mode == "landlock" && hub.Sandboxes().LandlockABI >= 6 && r.Err == "" {
						t.Errorf("%s: allowed, want the bot out of the server's reach", r.Target)
					}
				case r.Target == b.visible:
					if r.Err != "" || r.Bytes == 0 {
						t.Errorf("%s: %s, %d bytes; want the server's own file read", r.Target, r.Err, r.Bytes)
					}
				case len(r.Found) > 0:
					t.Errorf("%s: found the secret (%s)", r.Target, r.Err)
				case strings.HasPrefix(r.Target, "/proc/"):
					// Read or not, nothing of the bot's was in it.
				case r.Err == "" && r.Bytes > 0:
					t.Errorf("%s: read %d bytes, want it refused", r.Target, r.Bytes)
				}
			}
		})
	}
}

// checkExposed is the other side of TestSandboxHidesTheBot: unconfined,
// the server reads whatever its user can: every file open to others.
// Where the bot runs as root, that user is the server's own, which may
// not signal the bot, read its memory or /etc/shadow.
func checkExposed(t *testing.T, b botDir, rep probeReport) {
	t.Helper()
	root := os.Geteuid() == 0
	for _, r := range rep.Results {
		if strings.HasPrefix(r.Target, "kill ") {
			if got := r.Err == ""; got == root {
				t.Errorf("unconfined, %s: allowed %v (%s), want %v", r.Target, got, r.Err, !root)
			}
			continue
		}
		if r.Target == "capabilities" {
			continue
		}
		if r.Target == "/etc/shadow" {
			if r.Bytes > 0 {
				t.Errorf("unconfined, /etc/shadow: read %d bytes, want it refused to a server's user", r.Bytes)
			}
			continue
		}
		want := r.Target == b.db || r.Target == b.env || r.Target == b.secret || r.Target == filepath.Join(b.media, "photo.jpg")
		if got := len(r.Found) > 0; got != want {
			t.Errorf("unconfined, %s: found the secret %v (%s), want %v", r.Target, got, r.Err, want)
		}
		if (r.Target == b.elsewhere || r.Target == b.settings && !root) && r.Bytes == 0 {
			t.Errorf("unconfined, %s could not be read: %s", r.Target, r.Err)
		}
	}
}

// markedProcesses counts the processes whose environment holds the mark:
// a sandboxed server's own pid means nothing outside its namespace.
func markedProcesses(mark string) int {
	paths, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("ECHO_MARK="+mark+"\x00")) {
			n++
		}
	}
	return n
}

// A sandboxed server stops as an unsandboxed one does: SIGTERM reaches
// the server itself, which may take its time to clean up (bubblewrap,
// which leads its process group, would otherwise die at once and take the
// server with it), and nothing it started outlives the stop. One that
// ignores its closed stdin and SIGTERM is killed, and Close says so. (What
// a server leaves behind when it exits ends with it, by the kernel's hand:
// its PID namespace ends with the server.)
func TestSandboxedServerStops(t *testing.T) {
	t.Parallel()
	testenv.RequireSandbox(t, "bubblewrap")
	for _, stubborn := range []bool{false, true} {
		t.Run("stubborn="+strconv.FormatBool(stubborn), func(t *testing.T) {
			t.Parallel()
			dir := testenv.OpenDir(t)
			mark := strconv.FormatInt(time.Now().UnixNano(), 36)
			term := filepath.Join(dir, "term", "cleaned")
			env := map[string]string{
				"ECHO_MARK": mark, "ECHO_TERM_FILE": term,
				"ECHO_GRANDCHILD_PIDFILE": filepath.Join(dir, "grandchild", "pid"),
			}
			if stubborn {
				env["ECHO_IGNORE_TERM"] = "1"
			}
			path := testenv.WriteSettings(t, dir, map[string]any{"echo": echoServer(t, map[string]any{"env": env, "sandbox": "bubblewrap"})})
			opts := fastOptions()
			opts.StopGrace, opts.KillGrace = 100*time.Millisecond, 3*time.Second
			h, err := hub.New(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if s := server(t, h, "echo"); s.Status != mcpgram.StatusRunning || s.Sandbox != "bubblewrap" {
				t.Fatalf("echo is %s in %q: %s", s.Status, s.Sandbox, s.Error)
			}
			// bwrap, its init, the server and its grandchild.
			if n := markedProcesses(mark); n < 3 {
				t.Fatalf("%d processes of the server, want the server, its grandchild and bubblewrap", n)
			}
			err = h.Close()
			if n := markedProcesses(mark); n != 0 {
				t.Errorf("%d processes of the server outlived Close", n)
			}
			if stubborn {
				if err == nil || !strings.Contains(err.Error(), "killed") {
					t.Errorf("Close() = %v, want it to say it killed the stubborn server", err)
				}
				return
			}
			if err != nil {
				t.Errorf("Close() = %v, want a clean stop", err)
			}
			if b, err := os.ReadFile(term); string(b) != "cleaned up" {
				t.Errorf("the server did not finish cleaning up on SIGTERM: %q, %v", b, err)
			}
		})
	}
}

// The pinned npm servers run in either sandbox as they are, without a
// word about the sandbox in their entries: server-everything answers,
// and server-filesystem works in the folder it is given and nowhere else.
func TestNPMServersInTheSandbox(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testenv.RequireSandbox(t, mode)
			node, fsDir := testenv.NPMPackage(t, "@modelcontextprotocol/server-filesystem")
			files := filepath.Join(testenv.OpenDir(t), "files")
			if err := os.Mkdir(files, 0o755); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(testenv.OpenDir(t), "outside.txt")
			if err := os.WriteFile(outside, []byte("not for the server"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
				"everything": testenv.EverythingEntry(t),
				"filesystem": map[string]any{"command": node, "args": []string{filepath.Join(fsDir, "dist", "index.js"), files}},
			})
			opts := fastOptions()
			opts.Sandbox = mcpgram.SandboxMode(mode)
			h := testenv.StartHub(t, path, opts)
			for _, name := range []string{"everything", "filesystem"} {
				if s := server(t, h, name); s.Status != mcpgram.StatusRunning || s.Sandbox != mode {
					stderr, _ := h.Stderr(name) // all of it: a Node.js trace ends in its version
					t.Fatalf("%s is %s in %q: %s\nstderr:\n%s", name, s.Status, s.Sandbox, s.Error, stderr)
				}
			}
			if got := call(t, h, "everything", "echo", map[string]any{"message": "boxed"}).Text(); got != "Echo: boxed" {
				t.Errorf("everything echo = %q", got)
			}
			note := filepath.Join(files, "note.txt")
			if res := call(t, h, "filesystem", "write_file", map[string]any{"path": note, "content": "written in the sandbox"}); res.IsError {
				t.Fatalf("write_file: %s", res.Text())
			}
			if b, err := os.ReadFile(note); string(b) != "written in the sandbox" {
				t.Errorf("the file the server wrote reads %q, %v", b, err)
			}
			res, err := h.CallTool(context.Background(), local, "filesystem", "read_text_file", map[string]any{"path": outside})
			if err == nil && !res.IsError {
				t.Errorf("filesystem read a file outside its folder: %s", res.Text())
			}
		})
	}
}

// Outside bubblewrap (which makes the folders on the way itself), a
// server's user must pass every folder on the way to what its entry
// names: a script beyond a folder only root may pass is not started, and
// its status names the folder and the fix, where the server would
// otherwise fail on its own words ("Cannot find module").
func TestLandlockServerMustPassTheWay(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	testenv.RequireSandbox(t, "landlock")
	closed := filepath.Join(testenv.OpenDir(t), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(closed, "server.sh")
	if err := os.WriteFile(script, []byte("exec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"script": map[string]any{"command": "/bin/sh", "args": []string{script}},
	})
	opts := fastOptions()
	opts.Sandbox = mcpgram.SandboxLandlock
	h := testenv.StartHub(t, path, opts)
	s := server(t, h, "script")
	if s.Status == mcpgram.StatusRunning || !strings.Contains(s.Error, "cannot pass "+closed+" on the way to "+script) || !strings.Contains(s.Error, "chmod o+x "+closed) {
		t.Errorf("a script beyond a closed folder: %s, %q", s.Status, s.Error)
	}
}

// A Claude Desktop file of popular npx servers runs unchanged in the
// sandbox: npx finds its cache in ~/.npm, downloads what it lacks over the
// network, and starts the server. It needs the npm registry (or a warm
// cache); where npx cannot start the server even unsandboxed, the test
// skips, loudly.
func TestClaudeDesktopNPXServersInTheSandbox(t *testing.T) {
	t.Parallel()
	testenv.RequireSandbox(t, "bubblewrap")
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("SKIPPED LOUDLY: npx is not installed")
	}
	files := t.TempDir()
	servers := func(mode string) map[string]any {
		return map[string]any{
			"everything": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31"}, "sandbox": mode, "timeout": 120},
			"filesystem": map[string]any{"command": "npx", "args": []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", files}, "sandbox": mode, "timeout": 120},
		}
	}
	control := testenv.StartHub(t, testenv.WriteSettings(t, t.TempDir(), servers("off")), fastOptions())
	for _, s := range control.Catalog().Servers {
		if s.Status != mcpgram.StatusRunning {
			t.Skipf("SKIPPED LOUDLY: npx cannot start %s even unsandboxed (no registry?): %s", s.Name, s.Error)
		}
	}
	h := testenv.StartHub(t, testenv.WriteSettings(t, t.TempDir(), servers("required")), fastOptions())
	for _, s := range h.Catalog().Servers {
		if s.Status != mcpgram.StatusRunning || s.Sandbox == "" {
			t.Errorf("%s is %s in %q: %s (stderr %s)", s.Name, s.Status, s.Sandbox, s.Error, s.LastStderr)
		}
	}
	if got := call(t, h, "everything", "echo", map[string]any{"message": "npx"}).Text(); got != "Echo: npx" {
		t.Errorf("echo = %q", got)
	}
	if res := call(t, h, "filesystem", "list_allowed_directories", nil); !strings.Contains(res.Text(), files) {
		t.Errorf("list_allowed_directories = %q, want %s", res.Text(), files)
	}
}

// Where the machine offers no sandbox, auto runs a server unconfined and
// says why; a server that requires one is not started, and says why too.
// Not parallel: it fakes what the machine offers, for the whole process.
func TestNoSandboxHere(t *testing.T) {
	hub.FakeSandboxes(t, hub.SandboxSupport{BubblewrapErr: "bubblewrap is not installed", LandlockErr: "this kernel has no Landlock"})
	echo := testenv.TestServer(t, "echo")
	h, _ := startHub(t, map[string]any{
		"auto":     map[string]any{"command": echo},
		"required": map[string]any{"command": echo, "sandbox": "required"},
		"landlock": map[string]any{"command": echo, "sandbox": map[string]any{"mode": "landlock"}},
		"off":      map[string]any{"command": echo, "sandbox": "off"},
		"remote":   map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp", "disabled": true},
	})
	tests := []struct {
		name, status, notSandboxed string
	}{
		{"auto", "running", "this machine offers no sandbox (bubblewrap: bubblewrap is not installed; Landlock: this kernel has no Landlock)"},
		{"required", "failed", `not started: its sandbox cannot be had: bubblewrap: bubblewrap is not installed; Landlock: this kernel has no Landlock; install bubblewrap (apt-get install -y bubblewrap), or ask for "sandbox": "auto" in its entry, which runs it unconfined where none can be had`},
		{"landlock", "failed", `not started: its sandbox cannot be had: Landlock: this kernel has no Landlock; ask for "sandbox": "auto" in its entry, which takes whichever sandbox this machine has`},
		{"off", "running", "its settings turn the sandbox off"},
		{"remote", "disabled", ""},
	}
	for _, tt := range tests {
		s := server(t, h, tt.name)
		if string(s.Status) != tt.status || s.NotSandboxed != tt.notSandboxed || s.Sandbox != "" {
			t.Errorf("%s: %s, Sandbox %q, NotSandboxed %q; want %s, %q", tt.name, s.Status, s.Sandbox, s.NotSandboxed, tt.status, tt.notSandboxed)
		}
		if tt.status == "failed" && s.Error != tt.notSandboxed {
			t.Errorf("%s: Error = %q, want %q", tt.name, s.Error, tt.notSandboxed)
		}
	}
	if got := hub.Sandboxes().String(); !strings.Contains(got, "without a sandbox") || !strings.Contains(got, "bubblewrap is not installed") {
		t.Errorf("Sandboxes() says %q", got)
	}
}

// The sandbox field is checked like every other: a wrong one makes the
// entry unusable, with a reason that names it, and the rest still start.
func TestSandboxSettings(t *testing.T) {
	t.Parallel()
	echo := testenv.TestServer(t, "echo")
	h, _ := startHub(t, map[string]any{
		"number":  map[string]any{"command": echo, "sandbox": 5},
		"word":    map[string]any{"command": echo, "sandbox": "maybe"},
		"typo":    map[string]any{"command": echo, "sandbox": map[string]any{"mode": "auto", "netwrok": false}},
		"path":    map[string]any{"command": echo, "sandbox": map[string]any{"paths": []string{""}}},
		"remote":  map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp", "sandbox": "off"},
		"fine":    map[string]any{"command": echo, "sandbox": map[string]any{"mode": "AUTO", "network": false, "readOnlyPaths": []string{"~/x"}}},
		"default": map[string]any{"command": echo},
	})
	for name, want := range map[string]string{
		"number": "sandbox: want a mode",
		"word":   `sandbox: mode: want auto, required, bubblewrap, landlock or off, got "maybe"`,
		"typo":   `unknown field "netwrok"`,
		"path":   "sandbox: paths: an empty path",
		"remote": "sandbox: only a stdio server",
	} {
		if s := server(t, h, name); s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, want) {
			t.Errorf("%s: %s %q, want failed with %q", name, s.Status, s.Error, want)
		}
	}
	for _, name := range []string{"fine", "default"} {
		if s := server(t, h, name); s.Status != mcpgram.StatusRunning {
			t.Errorf("%s: %s %q, want running", name, s.Status, s.Error)
		}
	}
	if _, err := hub.New(filepath.Join(t.TempDir(), "x.json"), hub.Options{Sandbox: "sometimes"}); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("New with Sandbox %q: %v, want the mode refused", "sometimes", err)
	}
}

// An entry can cut a sandboxed server off the network: it then reaches
// no address, while an unsandboxed one does (the control).
func TestSandboxCutsTheNetwork(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testenv.RequireSandbox(t, mode)
			if mode == "landlock" && hub.Sandboxes().LandlockABI < 4 {
				t.Skip("Landlock cuts TCP from ABI 4 (Linux 6.7)")
			}
			ln := listen(t)
			h, _ := startHub(t, map[string]any{
				"cut":  echoServer(t, map[string]any{"sandbox": map[string]any{"mode": mode, "network": false}}),
				"open": echoServer(t, map[string]any{"sandbox": mode}),
			})
			if got := call(t, h, "open", "dial", map[string]any{"address": ln}).Text(); got != "connected" {
				t.Errorf("with the network: dial = %q, want connected", got)
			}
			if got := call(t, h, "cut", "dial", map[string]any{"address": ln}).Text(); got == "connected" {
				t.Errorf("without the network: dial = %q, want a failure", got)
			}
		})
	}
}

// Of the home folder, a sandboxed server sees what its entry names there
// (a file right in it, alone, and a folder), not the keys and
// configuration beside them, nor the user's own npm cache (~/.npm): npx
// gets a cache of the server's own, which no other server shares, so
// that no server can change the packages another one runs. Not
// parallel: the server's home is this process's HOME.
func TestSandboxShowsTheHomeFolderOnlyItsCache(t *testing.T) {
	home := testenv.OpenDir(t)
	t.Setenv("HOME", home)
	key, shared := filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, ".npm", "_cacache", "entry")
	notes, doc := filepath.Join(home, "notes.json"), filepath.Join(home, "docs", "a.txt")
	for path, content := range map[string]string{key: "PRIVATE KEY needle-home", shared: "a cached package", notes: "{}", doc: "a document"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The hostile server under the name of npx, twice.
	npx := filepath.Join(testenv.OpenDir(t), "npx")
	if err := os.Symlink(testenv.TestServer(t, "hostile"), npx); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			testenv.RequireSandbox(t, mode)
			entry := map[string]any{"command": npx, "args": []string{"~/notes.json", "~/docs"}, "sandbox": mode}
			h, _ := startHub(t, map[string]any{"npx": entry, "npx-too": entry})
			rep := probe(t, h, "npx", []string{"needle-home"}, []string{key, shared, notes, doc})
			for _, r := range rep.Results {
				switch r.Target {
				case key, shared:
					if r.Err == "" || len(r.Found) > 0 {
						t.Errorf("%s: read %d bytes, want it refused", r.Target, r.Bytes)
					}
				case notes, doc:
					if r.Err != "" || r.Bytes == 0 {
						t.Errorf("%s: %s, want it readable: the entry names it", r.Target, r.Err)
					}
				}
			}
			caches := map[string]string{}
			for _, srv := range []string{"npx", "npx-too"} {
				cache := attackOf(t, h, srv, "env", "npm_config_cache", "", 0).Info
				if cache == "" || strings.HasPrefix(cache, home) {
					t.Fatalf("%s: npm_config_cache = %q, want a folder of its own", srv, cache)
				}
				caches[srv] = cache
				if r := attackOf(t, h, srv, "plant", filepath.Join(cache, "pkg.js"), "", 0); r.Err != "" {
					t.Errorf("%s: writing its own cache: %s", srv, r.Err)
				}
			}
			if caches["npx"] == caches["npx-too"] {
				t.Errorf("both servers share the cache %s", caches["npx"])
			}
			if r := attackOf(t, h, "npx", "plant", filepath.Join(caches["npx-too"], "pkg.js"), "", 0); r.Err == "" {
				t.Errorf("npx rewrote npx-too's cache")
			}
		})
	}
}

// What an entry names is shown, and no more: a folder after --flag=, a
// relative path with a slash that exists, a script with its project, a
// file in node_modules with that node_modules, and the sandbox's
// readOnlyPaths; what lies beside them is not.
func TestSandboxShowsWhatTheEntryNames(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testenv.RequireSandbox(t, mode)
			d := testenv.OpenDir(t)
			files := map[string]string{}
			for _, f := range []string{
				"testdata/raw/main.go", "testdata/echo/main.go",
				"flagged/a.txt",
				"project/package.json", "project/build/index.js", "project/lib/helper.js",
				"app/node_modules/pkg/dist/index.js", "app/node_modules/dep/index.js", "app/secret.txt",
				"extra/config.toml", "beside/unnamed.txt",
			} {
				p := filepath.Join(d, f)
				files[f] = p
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := testenv.WriteSettings(t, d, map[string]any{"hostile": map[string]any{
				"command": testenv.TestServer(t, "hostile"),
				// testdata/raw: a path with a slash that exists, relative
				// to the working folder (the settings file's, where the
				// server runs).
				"args":    []string{"--data=" + filepath.Join(d, "flagged"), files["project/build/index.js"], files["app/node_modules/pkg/dist/index.js"], "testdata/raw"},
				"sandbox": map[string]any{"mode": mode, "readOnlyPaths": []string{files["extra/config.toml"]}},
			}})
			h := testenv.StartHub(t, path, fastOptions())
			var all []string
			for _, p := range files {
				all = append(all, p)
			}
			hidden := []string{files["app/secret.txt"], files["beside/unnamed.txt"], files["testdata/echo/main.go"]}
			for _, r := range probe(t, h, "hostile", nil, all).Results {
				if !strings.HasPrefix(r.Target, d) {
					continue
				}
				if got, want := r.Err == "", !slices.Contains(hidden, r.Target); got != want {
					t.Errorf("%s: read %v (%s), want %v", r.Target, got, r.Err, want)
				}
			}
		})
	}
}

// A protected file stays hidden when it is replaced while the server
// runs, as an editor's save replaces it: a folder that holds one is shown
// read-only entry by entry, and the new file was never among them. A
// server whose entry would have it write in such a folder is not started,
// and says why.
func TestSandboxHidesAReplacedFile(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testenv.RequireSandbox(t, mode)
			b := newBotDir(t, mode)
			hostile := testenv.TestServer(t, "hostile")
			b.settings = testenv.WriteSettings(t, b.dir, map[string]any{
				"reader": map[string]any{"command": hostile, "sandbox": map[string]any{"mode": mode, "readOnlyPaths": []string{b.dir}}},
				"writer": map[string]any{"command": hostile, "cwd": b.dir, "sandbox": mode},
			})
			opts := fastOptions()
			opts.Protected = []string{b.env, b.secret}
			h := testenv.StartHub(t, b.settings, opts)
			if s := server(t, h, "writer"); s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, `its "cwd" would let it write in`) || !strings.Contains(s.Error, `give it a "cwd" of its own`) || !strings.Contains(s.Error, b.dir) {
				t.Errorf("writer: %s %q, want failed, naming the folder and what to do", s.Status, s.Error)
			}
			replaced := b.env + ".new"
			if err := os.WriteFile(replaced, []byte("OPENAI_API_KEY=replaced-"+b.needle), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(replaced, b.env); err != nil {
				t.Fatal(err)
			}
			for _, r := range probe(t, h, "reader", []string{b.needle}, []string{b.env, b.settings, b.visible}).Results {
				switch r.Target {
				case b.visible:
					if r.Err != "" {
						t.Errorf("%s: %s, want it readable", r.Target, r.Err)
					}
				case b.env, b.settings:
					if r.Bytes > 0 || len(r.Found) > 0 {
						t.Errorf("%s: read %d bytes, want it hidden", r.Target, r.Bytes)
					}
				}
			}
		})
	}
}
