package hub_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Close names the servers that ignored the request to stop and had to be
// killed, and only those: the echo server exits when its stdin closes,
// while the shell around the stubborn one ignores SIGTERM and then waits
// on, so only SIGKILL ends it.
func TestCloseNamesServersThatHadToBeKilled(t *testing.T) {
	t.Parallel()
	echo := testenv.TestServer(t, "echo")
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"clean":    map[string]any{"command": echo},
		"stubborn": map[string]any{"command": "/bin/sh", "args": []string{"-c", "trap '' TERM; " + echo + "; sleep 3600"}, "sandbox": "off"},
	})
	h, err := hub.New(path, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	shell := parentOf(t, pidOf(t, h, "stubborn"))
	if s := server(t, h, "clean"); s.Status != mcpgram.StatusRunning {
		t.Fatalf("clean is %s, want running", s.Status)
	}

	err = h.Close()
	if err == nil {
		t.Fatal("Close() = nil, want an error naming the server it had to kill")
	}
	if got := err.Error(); !strings.Contains(got, `stop server "stubborn": killed`) || strings.Contains(got, `"clean"`) {
		t.Errorf("Close() = %q, want it to name stubborn as killed, and clean not at all", got)
	}
	if alive(shell) {
		t.Errorf("the stubborn server (pid %d) outlived Close", shell)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
}

// A process the server left behind that ignores SIGTERM is killed too, and
// Close says so; one that ends on SIGTERM is no news (TestCloseLeavesNoProcess).
func TestCloseNamesLeftoversThatHadToBeKilled(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(testenv.OpenDir(t), "grandchild.pid")
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"env": map[string]string{
		"ECHO_GRANDCHILD_PIDFILE": pidfile,
		"ECHO_IGNORE_TERM":        "1",
	}}))})
	h, err := hub.New(path, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(string(b))

	err = h.Close()
	if err == nil || !strings.Contains(err.Error(), `stop server "echo": killed processes it left behind`) {
		t.Errorf("Close() = %v, want it to say it killed what echo left behind", err)
	}
	if alive(grandchild) {
		t.Errorf("grandchild %d outlived Close", grandchild)
	}
}

// parentOf reads the parent of process pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Skipf("no /proc to find the server's shell: %v", err)
	}
	// The parent is the second field after the command name in parentheses.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatalf("parent of %d: %v", pid, err)
	}
	return ppid
}
