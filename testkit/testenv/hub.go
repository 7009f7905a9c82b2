package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"golang.org/x/sys/unix"
)

// WriteSettings writes an mcp-settings.json holding servers (name to
// settings entry) into dir and returns its path.
func WriteSettings(t testing.TB, dir string, servers map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp-settings.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// EverythingEntry is the settings entry that runs the pinned
// server-everything, with the given tools auto-approved.
func EverythingEntry(t testing.TB, autoApprove ...string) map[string]any {
	t.Helper()
	command, args := Everything(t)
	if autoApprove == nil {
		autoApprove = []string{}
	}
	return map[string]any{"command": command, "args": args, "autoApprove": autoApprove}
}

// EchoEntry is the settings entry that runs the test server
// hub/testdata/echo, with the given tools auto-approved.
func EchoEntry(t testing.TB, autoApprove ...string) map[string]any {
	t.Helper()
	if autoApprove == nil {
		autoApprove = []string{}
	}
	return map[string]any{"command": TestServer(t, "echo"), "autoApprove": autoApprove}
}

// FeaturesEntry is the settings entry that runs the test server
// hub/testdata/features, which speaks 2026-07-28 or, legacy, only the 2025
// revisions, with the given tools auto-approved.
func FeaturesEntry(t testing.TB, legacy bool, autoApprove ...string) map[string]any {
	t.Helper()
	if autoApprove == nil {
		autoApprove = []string{}
	}
	args := []string{}
	if legacy {
		args = append(args, "-legacy")
	}
	return map[string]any{"command": TestServer(t, "features"), "args": args, "autoApprove": autoApprove}
}

// TasksEntry is the settings entry that runs the test server
// hub/testdata/tasks, which offers 2026-07-28's Tasks extension, with the
// given tools auto-approved.
func TasksEntry(t testing.TB, autoApprove ...string) map[string]any {
	t.Helper()
	if autoApprove == nil {
		autoApprove = []string{}
	}
	return map[string]any{"command": TestServer(t, "tasks"), "autoApprove": autoApprove}
}

// TasksHTTP runs hub/testdata/tasks as a remote server, over Streamable
// HTTP on a port of 127.0.0.1, until the test ends, and returns its URL
// and a func that ends every task working at its next tasks/get.
func TasksHTTP(t testing.TB) (url string, finish func()) {
	t.Helper()
	cmd := exec.Command(TestServer(t, "tasks"), "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the tasks server's URL: %v", err)
	}
	url = strings.TrimSpace(line)
	return url, func() {
		t.Helper()
		resp, err := http.Post(strings.TrimSuffix(url, "/mcp")+"/finish", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
}

// NewHub returns a hub on the settings file at path, not started, and
// closes it when the test ends. A zero StopGrace is shortened: a test has
// no patience for a server that ignores its closed stdin. A zero KillGrace
// is 2 s: a server that handles SIGTERM (Node's do) may take more than a
// moment to end on a loaded machine, and Close reports one it had to kill.
func NewHub(t testing.TB, path string, opts hub.Options) *hub.Hub {
	t.Helper()
	if opts.StopGrace == 0 {
		opts.StopGrace = 200 * time.Millisecond
	}
	if opts.KillGrace == 0 {
		opts.KillGrace = 2 * time.Second
	}
	if opts.Confine == "" {
		opts.Confine = Confine(t)
	}
	h, err := hub.New(path, opts)
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("hub Close: %v", err)
		}
	})
	return h
}

// StartHub is NewHub, then Start: it returns once every server is up or
// has failed.
func StartHub(t testing.TB, path string, opts hub.Options) *hub.Hub {
	t.Helper()
	h := NewHub(t, path, opts)
	Start(t, h)
	return h
}

// StartAsking is NewHub, AskThrough ask, then Start: the hub of a test
// whose askers exist before it.
func StartAsking(t testing.TB, path string, opts hub.Options, ask hub.Askers) *hub.Hub {
	t.Helper()
	h := NewHub(t, path, opts)
	if err := h.AskThrough(ask); err != nil {
		t.Fatal(err)
	}
	Start(t, h)
	return h
}

// Start starts h (NewHub's, with its askers given if it has any) and
// returns once every server is up or has failed.
func Start(t testing.TB, h *hub.Hub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatalf("hub Start: %v", err)
	}
}

// Running fails the test unless every server of h is running.
func Running(t testing.TB, h *hub.Hub) {
	t.Helper()
	for _, s := range h.Catalog().Servers {
		if s.Status != mcpgram.StatusRunning {
			t.Fatalf("server %s is %s: %s", s.Name, s.Status, s.Error)
		}
	}
}

// RequireSandboxEnv names the variable that makes a missing sandbox fail
// the tests that need it instead of skipping them, as CI sets it.
const RequireSandboxEnv = "MCPGRAM_REQUIRE_SANDBOX"

// RequireSandbox skips the test, loudly, where this machine cannot run MCP
// servers in the sandbox engine names ("bubblewrap" or "landlock"), and
// fails it instead with MCPGRAM_REQUIRE_SANDBOX=1.
func RequireSandbox(t testing.TB, engine string) {
	t.Helper()
	s := hub.Sandboxes()
	why := s.LandlockErr
	if engine == "bubblewrap" {
		why = s.BubblewrapErr
	}
	if why == "" {
		return
	}
	msg := "SKIPPED LOUDLY: no " + engine + " sandbox here (" + why + "); on Debian, apt-get install -y bubblewrap"
	if os.Getenv(RequireSandboxEnv) == "1" {
		t.Fatal(msg + "; " + RequireSandboxEnv + "=1 requires it")
	}
	t.Skip(msg)
}

// GatedEchoEntry is EchoEntry for a server that starts only when the test
// says: the returned open lets it past its gate (a FIFO it reads first),
// and until then it is starting. Its timeout is a day, so that only the
// test decides when it starts. open fails the test if the server has not
// reached its gate within 30 seconds.
func GatedEchoEntry(t testing.TB, autoApprove ...string) (entry map[string]any, open func()) {
	t.Helper()
	// Open to the server's own user, where the tests run as root.
	gate := filepath.Join(OpenDir(t), "gate")
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(gate, 0o666); err != nil {
		t.Fatal(err)
	}
	entry = EchoEntry(t, autoApprove...)
	entry["env"] = map[string]string{"ECHO_START_GATE": gate}
	entry["timeout"] = 86400
	open = func() {
		t.Helper()
		// Opening a FIFO to write without blocking fails until a reader
		// has it open: the server, at its gate.
		var f *os.File
		Eventually(t, 30*time.Second, "the server at its gate", func() bool {
			var err error
			f, err = os.OpenFile(gate, os.O_WRONLY|unix.O_NONBLOCK, 0)
			return err == nil
		})
		f.Close()
	}
	return entry, open
}
