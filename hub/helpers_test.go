package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: every hub
// a test starts is closed by its cleanup, and Close must wait for all the
// hub's goroutines. The bundled servers are on PATH for the examples.
func TestMain(m *testing.M) {
	testenv.Prepare()
	if err := testenv.PutBundledOnPath(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// eachMode runs f in a parallel subtest for each sandbox mode of modes,
// skipping, loudly, one this machine lacks ("off" needs none).
func eachMode(t *testing.T, modes []string, f func(t *testing.T, mode string)) {
	t.Helper()
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode != "off" {
				testenv.RequireSandbox(t, mode)
			}
			f(t, mode)
		})
	}
}

// fastOptions shortens every wait of the hub so the tests run quickly.
func fastOptions() hub.Options {
	return hub.Options{
		RestartDelay:    50 * time.Millisecond,
		MaxRestartDelay: 400 * time.Millisecond,
		HealthyAfter:    time.Second,
		StopGrace:       300 * time.Millisecond,
		KillGrace:       300 * time.Millisecond,
		WatchDelay:      30 * time.Millisecond,
		CacheDir:        testenv.CacheDir(),
	}
}

// writeJSON writes v to path as an edit of the settings file would.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// Write and rename, as editors do, so the watcher never reads half a file.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// startHub starts a hub over servers with fast options and closes it when
// the test ends.
func startHub(t testing.TB, servers map[string]any) (*hub.Hub, string) {
	t.Helper()
	path := testenv.WriteSettings(t, t.TempDir(), servers)
	return testenv.StartHub(t, path, fastOptions()), path
}

// hostPIDs is the setting that runs a server outside the sandbox, for the
// tests that follow its processes by their ids.
var hostPIDs = map[string]any{"sandbox": "off"}

// with returns a copy of entry with the fields of extra added.
func with(entry map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range entry {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func echoServer(t testing.TB, extra map[string]any) map[string]any {
	t.Helper()
	s := map[string]any{"command": testenv.TestServer(t, "echo")}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

func server(t testing.TB, h *hub.Hub, name string) mcpgram.ServerInfo {
	t.Helper()
	s, ok := h.Catalog().Server(name)
	if !ok {
		t.Fatalf("no server %q in catalog", name)
	}
	return s
}

func waitStatus(t testing.TB, h *hub.Hub, name string, want mcpgram.Status) mcpgram.ServerInfo {
	t.Helper()
	var got mcpgram.ServerInfo
	testenv.Eventually(t, 10*time.Second, name+" to be "+string(want), func() bool {
		got = server(t, h, name)
		return got.Status == want
	})
	return got
}

var local = mcpgram.Caller{UserID: "42", ChatID: "-100"}

func call(t testing.TB, h *hub.Hub, srv, tool string, args map[string]any) *mcpgram.Result {
	t.Helper()
	res, err := h.CallTool(context.Background(), local, srv, tool, args)
	if err != nil {
		s := server(t, h, srv)
		t.Fatalf("CallTool(%s, %s): %v (the server is %s: %s)", srv, tool, err, s.Status, s.Error)
	}
	return res
}

// An attackResult is what one attack of hub/testdata/hostile got.
type attackResult struct {
	Target string `json:"target"`
	Err    string `json:"err"`
	Bytes  int    `json:"bytes"`
	Info   string `json:"info"`
}

// attackOf has the hostile server srv try one attack (see
// hub/testdata/hostile/attack.go).
func attackOf(t testing.TB, h *hub.Hub, srv, what, path, target string, n int) attackResult {
	t.Helper()
	res := call(t, h, srv, "attack", map[string]any{"what": what, "path": path, "target": target, "n": n})
	var r attackResult
	text, _, _ := strings.Cut(res.Text(), "\n") // after it, what mcpgram adds to an error
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("attack %s: %v: %s", what, err, res.Text())
	}
	return r
}

// pidOf returns the process id of an unsandboxed server. A sandboxed
// server has a PID namespace of its own, where it is always pid 2: a test
// that follows processes by id must run them with "sandbox": "off"
// (hostPIDs), or it would compare 2 with 2 and pass whatever happened.
func pidOf(t testing.TB, h *hub.Hub, srv string) int {
	t.Helper()
	if s := server(t, h, srv); s.Sandbox != "" {
		t.Fatalf("pidOf(%s): the server runs in %s, where its pid means nothing here; give it hostPIDs", srv, s.Sandbox)
	}
	pid, err := strconv.Atoi(call(t, h, srv, "pid", nil).Text())
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// listen returns the address of a TCP listener that takes each connection
// and closes it at once, until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}
