package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A server that writes on without a newline is stopped at the bound, its
// status says why, and the call waiting on it fails at once instead of the
// bot reading (and holding) all it writes. The server's timeout is far
// beyond the test: only the bound can end the call.
func TestServerOverTheMessageBoundIsStopped(t *testing.T) {
	t.Parallel()
	opts := fastOptions()
	opts.MaxMessage = 1 << 20
	opts.RestartDelay = time.Hour
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"flood": map[string]any{"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "flood"}, "timeout": 3600},
	})
	h := testenv.StartHub(t, path, opts)
	_, err := h.CallTool(context.Background(), local, "flood", "weird", nil)
	if !errors.Is(err, mcpgram.ErrNotRunning) {
		t.Fatalf("call to the flooding server: err = %v, want ErrNotRunning", err)
	}
	s := waitStatus(t, h, "flood", mcpgram.StatusRestarting)
	if !strings.Contains(s.Error, "wrote a message over 1 MiB without a newline") {
		t.Errorf("status error = %q, want the reason", s.Error)
	}
}

// Messages of several MB, under the bound, pass whole.
func TestBigMessagesPass(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	big := strings.Repeat("0123456789", 500_000) // 5 MB
	if got := call(t, h, "echo", "echo", map[string]any{"message": big}).Text(); got != big {
		t.Errorf("echo of 5 MB came back as %d bytes", len(got))
	}
}

// A server that answers a request it could not read with an error whose
// id is null fails the calls in flight at once with that error, instead
// of leaving them to wait out the timeout (an hour here).
func TestNullIDErrorFailsCallsInFlight(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{
		"nullid": map[string]any{"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "nullid"}, "timeout": 3600},
	})
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = h.CallTool(context.Background(), local, "nullid", "weird", nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "could not read a request") || !strings.Contains(err.Error(), "Parse error") {
			t.Errorf("call %d: err = %v, want the server's parse error", i, err)
		}
	}
	// The server stays usable.
	if s := server(t, h, "nullid"); s.Status != mcpgram.StatusRunning {
		t.Errorf("status %s after the errors, want running", s.Status)
	}
}
