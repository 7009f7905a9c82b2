package harden_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/internal/harden"
	"golang.org/x/sys/unix"
)

const (
	childEnv = "HARDEN_TEST_CHILD"
	secret   = "sk-needle-6f1c2b"
)

// TestMain makes the test binary the hardened process when re-run as one:
// the environment is process-wide, so the test runs in a child.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		child()
		return
	}
	os.Exit(m.Run())
}

// child hardens itself, reports what it sees of itself, and waits for its
// stdin to close, so that the test can look at it from outside meanwhile.
func child() {
	errForget := harden.ForgetEnv([]string{"MODEL_KEY", "NOT_SET"})
	errDump := harden.NotDumpable()
	dumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Printf("forget=%v dump=%v dumpable=%d getenv=%q other=%q\n", errForget, errDump, dumpable, os.Getenv("MODEL_KEY"), os.Getenv("KEEP_ME"))
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// After ForgetEnv and NotDumpable, the secret is gone from the process's
// environment as Go sees it and as /proc/<pid>/environ shows it to anyone,
// root included, while other variables stay; and the process is no longer
// dumpable.
func TestForgetEnvAndNotDumpable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the kernel's copy of the environment and dumpability are Linux's")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{childEnv + "=1", "MODEL_KEY=" + secret, "KEEP_ME=yes"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := `forget=<nil> dump=<nil> dumpable=0 getenv="" other="yes"`; strings.TrimSpace(line) != want {
		t.Errorf("the child says %q, want %q", strings.TrimSpace(line), want)
	}
	// Read while it runs: as root this read succeeds whatever dumpability
	// says, which is why the value itself must be gone.
	env, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatal(err)
		}
		// A non-root reader is refused outright by non-dumpability.
		return
	}
	if bytes.Contains(env, []byte(secret)) {
		t.Errorf("/proc/<pid>/environ still holds the secret: %q", env)
	}
	if !bytes.Contains(env, []byte("KEEP_ME=yes")) || !bytes.Contains(env, []byte("MODEL_KEY=")) {
		t.Errorf("/proc/<pid>/environ = %q, want KEEP_ME=yes kept and MODEL_KEY= with its value wiped", env)
	}
}
