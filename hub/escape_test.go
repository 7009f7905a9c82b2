package hub_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// What follows is the sandbox tried as an attacker would, as root, the way
// CI and many operators run the bot: a server that wants out of its
// sandbox, into the bot's data, or more than its share of the machine.

// requireRoot skips, loudly, where the tests do not run as root: there is
// no user to leave behind, and a server runs as the bot's own.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: the tests do not run as root, so servers run as this user and there is no root to keep them from")
	}
}

// A server never runs as root, in or out of a sandbox: each has a user of
// its own (ServerInfo.UID), no capability, and cannot open for writing
// what of /proc and /sys changes the machine (core_pattern, which the
// kernel runs as root in the host's namespaces, above all). bubblewrap's
// own test of /proc/sys can leave it writable to root; the hub mounts
// /proc read-only itself.
func TestServerNeverRunsAsRoot(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	eachMode(t, []string{"bubblewrap", "landlock", "off"}, func(t *testing.T, mode string) {
		entry := map[string]any{"command": testenv.TestServer(t, "hostile"), "sandbox": mode}
		h, _ := startHub(t, map[string]any{"one": entry, "two": entry})
		one, two := server(t, h, "one"), server(t, h, "two")
		if one.UID == 0 || two.UID == 0 || one.UID == two.UID {
			t.Errorf("UIDs %d and %d, want two users of their own, neither root", one.UID, two.UID)
		}
		who := attackOf(t, h, "one", "whoami", "", "", 0)
		if !strings.HasPrefix(who.Info, "uid="+strconv.Itoa(one.UID)+" ") || !strings.Contains(who.Info, "0000000000000000") {
			t.Errorf("whoami = %q, want uid %d and no capability", who.Info, one.UID)
		}
		if open := attackOf(t, h, "one", "procsys", "", "", 0); open.Info != "" {
			t.Errorf("opened for writing: %s", open.Info)
		}
	})
}

// A symlink a server leaves where its entry names a path never widens its
// view at the next start: the entry is refused, saying which link to
// remove, whether the link is the named file itself or a folder on the
// way to it, and the folder it points to is never shown.
func TestSymlinkLeftBehindWidensNothing(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bubblewrap", "landlock"} {
		for _, at := range []string{"file", "folder"} {
			t.Run(mode+"/"+at, func(t *testing.T) {
				t.Parallel()
				testenv.RequireSandbox(t, mode)
				b := newBotDir(t, mode)
				outside := testenv.OpenDir(t)
				// The file's: its own folder, made for it. The folder's:
				// a folder it is given, and a file below it.
				own := filepath.Join(b.dir, "data", "evil")
				named, link := filepath.Join(own, "evil.db"), filepath.Join(own, "evil.db")
				args := []string{}
				if at == "folder" {
					named, link = filepath.Join(b.own, "sub", "evil.db"), filepath.Join(b.own, "sub")
					args = []string{b.own}
					if err := os.MkdirAll(link, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				entries := map[string]any{"hostile": map[string]any{
					"command": testenv.TestServer(t, "hostile"), "args": args, "env": map[string]string{"HOSTILE_DB_PATH": named}, "sandbox": mode,
				}}
				h := b.start(t, entries)
				if r := attackOf(t, h, "hostile", "symlink", link, outside, 0); r.Err != "" {
					t.Fatalf("leaving the link: %s", r.Err)
				}
				if err := h.Close(); err != nil {
					t.Fatal(err)
				}
				h = b.start(t, entries)
				s := server(t, h, "hostile")
				if s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, link+" is a symbolic link") {
					t.Errorf("after the restart: %s %q, want failed, naming the link", s.Status, s.Error)
				}
				if entries, _ := os.ReadDir(outside); len(entries) > 0 {
					t.Errorf("the folder the link points to holds %d entries, want none", len(entries))
				}
			})
		}
	}
}

// The bot's data is out of every server's reach: a server cannot plant a
// rollback journal for SQLite to play back into the bot's database, nor
// replace a user's photo, when it shares the bot's data folder as the
// memory server does (a folder of its own inside it); and an entry whose
// own folder would be the bot's data folder (the old layout,
// ./data/memory.db) is refused, naming the bot's file and the fix.
func TestBotsDataOutOfReach(t *testing.T) {
	t.Parallel()
	eachMode(t, []string{"bubblewrap", "landlock"}, func(t *testing.T, mode string) {
		b := newBotDir(t, mode)
		hostile := testenv.TestServer(t, "hostile")
		h := b.start(t, map[string]any{
			"own":    map[string]any{"command": hostile, "env": map[string]string{"HOSTILE_DB_PATH": filepath.Join(b.own, "hostile.db")}, "sandbox": mode},
			"beside": map[string]any{"command": hostile, "env": map[string]string{"HOSTILE_DB_PATH": filepath.Join(b.dir, "data", "hostile.db")}, "sandbox": mode},
		})
		for _, a := range []struct{ what, path string }{
			{"plant", b.db + "-journal"}, {"plant", b.db + "-wal"}, {"write", filepath.Join(b.media, "photo.jpg")}, {"plant", filepath.Join(b.media, "new.jpg")},
		} {
			if r := attackOf(t, h, "own", a.what, a.path, "", 0); r.Err == "" {
				t.Errorf("%s %s: done, want it refused", a.what, a.path)
			}
		}
		for _, p := range []string{b.db + "-journal", filepath.Join(b.media, "new.jpg")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s exists", p)
			}
		}
		s := server(t, h, "beside")
		if s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, "of the bot's own") || !strings.Contains(s.Error, "a folder of its own") {
			t.Errorf("beside: %s %q, want failed, naming the bot's file and the fix", s.Status, s.Error)
		}
	})
}

// A path an entry names that does not exist yet is never widened to the
// folder it would be in: a name without an extension is made a folder of
// the server's own (npm_config_cache=/srv/bot/npm-cache), a file's in a
// folder that holds other files is refused; and a start that is refused
// makes nothing on disk.
func TestMissingPathIsNotWidened(t *testing.T) {
	t.Parallel()
	eachMode(t, []string{"bubblewrap", "landlock"}, func(t *testing.T, mode string) {
		b := newBotDir(t, mode)
		srv := testenv.OpenDir(t) // as /srv/bot
		other := filepath.Join(srv, "other.txt")
		if err := os.WriteFile(other, []byte("someone else's"), 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := filepath.Join(testenv.OpenDir(t), "fresh")
		hostile := testenv.TestServer(t, "hostile")
		h := b.start(t, map[string]any{
			"cache": map[string]any{"command": hostile, "env": map[string]string{"npm_config_cache": filepath.Join(srv, "npm-cache")}, "sandbox": mode},
			"file":  map[string]any{"command": hostile, "env": map[string]string{"DB": filepath.Join(srv, "new.db")}, "sandbox": mode},
			// Refused for the folder of the bot's it may write, after
			// naming a folder that would be made.
			"refused": map[string]any{"command": hostile, "env": map[string]string{"DB": filepath.Join(fresh, "x.db")}, "sandbox": map[string]any{"mode": mode, "paths": []string{b.dir}}},
		})
		if r := attackOf(t, h, "cache", "plant", filepath.Join(srv, "npm-cache", "x"), "", 0); r.Err != "" {
			t.Errorf("writing in its cache: %s", r.Err)
		}
		if r := attackOf(t, h, "cache", "plant", filepath.Join(srv, "y"), "", 0); r.Err == "" {
			t.Errorf("wrote beside its cache, want it refused")
		}
		if rep := probe(t, h, "cache", nil, []string{other}); rep.Results[len(rep.Results)-1].Err == "" {
			t.Errorf("read %s beside its cache, want it refused", other)
		}
		if s := server(t, h, "file"); s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, "does not exist yet") {
			t.Errorf("file: %s %q, want failed: its folder holds other files", s.Status, s.Error)
		}
		if s := server(t, h, "refused"); s.Status != mcpgram.StatusFailed {
			t.Errorf("refused: %s, want failed", s.Status)
		}
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("the refused start made %s", fresh)
		}
	})
}

// A command named through a folder the sandbox does not show
// (/srv/a/../bin/server) starts, its path cleaned; and a folder on PATH
// that holds anything of the bot's (a checkout where mcpgram was built,
// with its settings and data) is not shown: a command found there is
// shown alone.
func TestCommandPathsShowNoMore(t *testing.T) {
	testenv.RequireSandbox(t, "bubblewrap")
	b := newBotDir(t, "path")
	bin := filepath.Join(b.dir, "hostile-bin")
	copyFile(t, testenv.TestServer(t, "hostile"), bin)
	if err := os.MkdirAll(filepath.Join(b.dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(b.dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("beside the settings"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", b.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := b.start(t, map[string]any{
		"dotdot": map[string]any{"command": filepath.Join(b.dir, "a", "..", "hostile-bin"), "sandbox": "bubblewrap"},
		"onpath": map[string]any{"command": "hostile-bin", "sandbox": "bubblewrap"},
	})
	for _, srv := range []string{"dotdot", "onpath"} {
		for _, r := range probe(t, h, srv, nil, []string{notes, b.visible}).Results {
			if (r.Target == notes || r.Target == b.visible) && r.Err == "" {
				t.Errorf("%s read %s, want it not shown", srv, r.Target)
			}
		}
	}
}

// A server gets its share of the machine and no more: a fork storm stops
// at its processes bound, and the server is stopped, saying which bound
// it hit; its /tmp (bubblewrap's, in memory) fills to its size; a file
// stops at the file size bound; memory held past its bound stops the
// server, which says so, and memory past twice the bound is refused at
// once. Each is restarted as a crash is.
func TestServerBounds(t *testing.T) {
	requireRoot(t)
	t.Parallel()
	eachMode(t, []string{"bubblewrap", "landlock", "off"}, func(t *testing.T, mode string) {
		own := filepath.Join(testenv.OpenDir(t), "own")
		entry := func(limits map[string]any) map[string]any {
			return map[string]any{"command": testenv.TestServer(t, "hostile"), "args": []string{own}, "sandbox": mode, "limits": limits}
		}
		h, _ := startHub(t, map[string]any{
			"forks":  entry(map[string]any{"processes": 40}),
			"tmp":    entry(map[string]any{"tmp": "8MiB"}),
			"file":   entry(map[string]any{"fileSize": "4MiB"}),
			"memory": entry(map[string]any{"memory": "256MiB"}),
		})
		if got := server(t, h, "forks").Bounds; got.Processes != 40 || got.Memory != hub.DefaultBounds.Memory {
			t.Errorf("Bounds = %+v, want 40 processes and the default memory", got)
		}
		if r := attackOf(t, h, "forks", "forks", "", "", 100); r.Bytes >= 45 || r.Err == "" {
			t.Errorf("forks: %d started (%s), want fewer than 45 (the kernel's limit, an eighth past the bound) and a refusal", r.Bytes, r.Err)
		}
		waitBound(t, h, "forks", "processes bound (40")
		if mode == "bubblewrap" {
			if r := attackOf(t, h, "tmp", "fill", "/tmp/big", "", 0); r.Bytes > 8<<20 || !strings.Contains(r.Err, "no space") {
				t.Errorf("fill /tmp: %d bytes (%s), want at most 8 MiB, then no space", r.Bytes, r.Err)
			}
		}
		if r := attackOf(t, h, "file", "bigfile", filepath.Join(own, "big"), "", 16<<20); r.Bytes > 4<<20 || !strings.Contains(r.Err, "too large") {
			t.Errorf("a 16 MiB file: %d bytes (%s), want at most 4 MiB, then too large", r.Bytes, r.Err)
		}
		// Held past the bound, and stopped by the hub: at its next
		// look, or, if that comes while it takes, during the call.
		if _, err := h.CallTool(t.Context(), local, "memory", "attack", map[string]any{"what": "alloc", "n": 280}); err != nil {
			t.Logf("alloc 280 MiB: %v (stopped while it took)", err)
		}
		waitBound(t, h, "memory", "memory bound (256 MiB")
		// Refused by the kernel past twice the bound.
		if _, err := h.CallTool(t.Context(), local, "memory", "attack", map[string]any{"what": "alloc", "n": 1024}); err == nil {
			t.Errorf("took 1 GiB past a 256 MiB bound")
		}
	})
}

// waitBound waits for server name to say it went past the bound: it says
// so once restarted too.
func waitBound(t *testing.T, h *hub.Hub, name, bound string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, name+" to say it went past its "+bound, func() bool {
		return strings.Contains(server(t, h, name).LastError, bound)
	})
}

// A folder root holds that a server is given (one an older mcpgram made,
// or that its server wrote as root) becomes that server's user's, but a
// file a server linked there from elsewhere (a hard link) stays as it is:
// otherwise a link to /etc/shadow would hand it over.
func TestServerIsGivenWhatRootHeldOfItsFolder(t *testing.T) {
	requireRoot(t)
	testenv.RequireSandbox(t, "bubblewrap")
	own := filepath.Join(testenv.OpenDir(t), "own")
	elsewhere := filepath.Join(filepath.Dir(own), "elsewhere.txt")
	for path, content := range map[string]string{filepath.Join(own, "notes.txt"): "kept as root", elsewhere: "not the server's"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(elsewhere, filepath.Join(own, "linked.txt")); err != nil {
		t.Fatal(err)
	}
	h, _ := startHub(t, map[string]any{"hostile": map[string]any{"command": testenv.TestServer(t, "hostile"), "args": []string{own}}})
	uid := server(t, h, "hostile").UID
	if r := attackOf(t, h, "hostile", "write", filepath.Join(own, "notes.txt"), "", 0); r.Err != "" {
		t.Errorf("writing its own notes: %s", r.Err)
	}
	for path, want := range map[string]int{own: uid, filepath.Join(own, "notes.txt"): uid, elsewhere: 0} {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if int(st.Uid) != want {
			t.Errorf("%s belongs to %d, want %d", path, st.Uid, want)
		}
	}
}

// Bounds are read from an entry's "limits"; a mistake fails that entry,
// saying what is wanted.
func TestBoundsSettings(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		limits any
		want   mcpgram.Bounds
		err    string
	}{
		{nil, hub.DefaultBounds, ""},
		{map[string]any{"memory": "512MiB", "processes": 64, "tmp": "unlimited", "fileSize": 1048576}, mcpgram.Bounds{Memory: 512 << 20, Processes: 64, Tmp: 0, FileSize: 1 << 20}, ""},
		{map[string]any{"memory": "lots"}, mcpgram.Bounds{}, `limits: memory: "lots" is not a size`},
		{map[string]any{"processes": "1.5"}, mcpgram.Bounds{}, `limits: processes: "1.5" is not a whole number`},
		{map[string]any{"processes": 0}, mcpgram.Bounds{}, `write "unlimited" to lift the bound`},
		{map[string]any{"cpu": 10}, mcpgram.Bounds{}, `unknown field "cpu"`},
	} {
		h, _ := startHub(t, map[string]any{"s": map[string]any{"command": testenv.TestServer(t, "echo"), "limits": tt.limits}})
		s := server(t, h, "s")
		switch {
		case tt.err != "" && !strings.Contains(s.Error, tt.err):
			t.Errorf("limits %v: error %q, want %q", tt.limits, s.Error, tt.err)
		case tt.err == "" && s.Bounds != tt.want:
			t.Errorf("limits %v: Bounds = %+v, want %+v", tt.limits, s.Bounds, tt.want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A command that is not found says which program it is probably a typo
// of, and what to fix; it is not said to run in a sandbox, for it never
// ran. Not parallel: it sets PATH.
func TestCommandNotFoundSuggests(t *testing.T) {
	t.Setenv("PATH", filepath.Dir(testenv.Bundled(t, "mcp-calculator"))+string(os.PathListSeparator)+os.Getenv("PATH"))
	h, _ := startHub(t, map[string]any{"calc": map[string]any{"command": "mcp-calculatr"}})
	s := server(t, h, "calc")
	if want := `command "mcp-calculatr" not found on PATH (did you mean "mcp-calculator"?): fix "command" in its entry`; s.Status != mcpgram.StatusFailed || s.Error != want {
		t.Errorf("%s %q, want failed %q", s.Status, s.Error, want)
	}
}

// A write the sandbox refuses is told for what it is, with how to allow
// it: in the failure of a server that dies of it at start, and in the
// error of a call that meets it (the server then lists it among its
// notes, as mcp list and /servers show them).
func TestWriteRefusedBySandboxIsSaid(t *testing.T) {
	t.Parallel()
	testenv.RequireSandbox(t, "bubblewrap")
	h, _ := startHub(t, map[string]any{
		"dies":    map[string]any{"command": "sh", "args": []string{"-c", "echo x > /usr/local/state.json"}},
		"hostile": map[string]any{"command": testenv.TestServer(t, "hostile")},
	})
	want := `its sandbox let it not write /usr/local/state.json: if it must, name a file or folder of its own for it in its entry`
	testenv.Eventually(t, 10*time.Second, "dies to fail", func() bool { return strings.Contains(server(t, h, "dies").LastError, want) })
	res := call(t, h, "hostile", "attack", map[string]any{"what": "plant", "path": "/opt/state.json"})
	if !strings.Contains(res.Text(), "its sandbox let it not write /opt/state.json") {
		t.Errorf("the call's result %q does not say the sandbox refused the write", res.Text())
	}
}

// The refused writes of Node.js, Python, Go and the shell are found,
// with their paths; other errors are not.
func TestRefusedWrite(t *testing.T) {
	for text, want := range map[string]string{
		"Error: EROFS: read-only file system, open '/app/dist/memory.jsonl'": "/app/dist/memory.jsonl",
		"OSError: [Errno 30] Read-only file system: '/srv/x/cache.db'":       "/srv/x/cache.db",
		"open /var/lib/x/state.json: read-only file system":                  "/var/lib/x/state.json",
		"sh: 1: cannot create /usr/local/state.json: Read-only file system":  "/usr/local/state.json",
		"Error: EACCES: permission denied, mkdir '/home/u/.config/app'":      "/home/u/.config/app",
		"connection refused":   "",
		"EROFS without a path": "",
	} {
		if got := hub.RefusedWrite(text); got != want {
			t.Errorf("RefusedWrite(%q) = %q, want %q", text, got, want)
		}
	}
}
