package hub_test

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// featuresOverHTTP starts hub/testdata/features as a child process serving
// HTTP on 127.0.0.1 (with -legacy, refusing server/discover) and returns
// its base URL; the process is stopped when the test ends.
func featuresOverHTTP(t *testing.T, legacy bool) string {
	t.Helper()
	args := []string{"-http"}
	if legacy {
		args = append(args, "-legacy")
	}
	cmd := exec.Command(testenv.TestServer(t, "features"), args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("features -http wrote no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// httpTransports are the ways the hub reaches the features server over
// HTTP: Streamable HTTP on either revision, and the legacy SSE transport.
// On a 2025 Streamable HTTP session, mcp-go's server hands a
// notification to whichever of the call's stream and the session's GET
// stream takes it first, so their order is not kept (ordered false).
var httpTransports = []struct {
	name, typ, path string
	legacy, ordered bool
}{
	{"streamable/2026-07-28", hub.TypeStreamableHTTP, "/mcp", false, true},
	{"streamable/2025-11-25", hub.TypeStreamableHTTP, "/mcp", true, false},
	{"sse", hub.TypeSSE, "/sse", false, true},
}

// featuresHTTPHub is a started hub whose server "f" is the features
// server, a child process reached over HTTP at path with transport typ.
func featuresHTTPHub(t *testing.T, typ, path string, legacy bool) *hub.Hub {
	t.Helper()
	base := featuresOverHTTP(t, legacy)
	settings := testenv.WriteSettings(t, t.TempDir(), map[string]any{"f": map[string]any{"type": typ, "url": base + path}})
	h := testenv.StartHub(t, settings, fastOptions())
	waitStatus(t, h, "f", mcpgram.StatusRunning)
	return h
}

// Over HTTP too, a tool call's progress token reaches the server, and what
// the server reports under it reaches the call's ProgressFunc (in order,
// where the server keeps it);
// cancelling the call's context then ends it on the server (its handler's
// context ends, and it counts the cancellation), which stays usable.
//
// The reports are sent while the call runs: what a server sends at the
// moment its handler returns may be dropped or overtaken by the result
// there (mcp-go's Streamable HTTP server can lose a notification it is
// forwarding when the result is written; its SSE server sends
// notifications and results on separate queues), and the hub drops
// progress that names a finished call.
func TestProgressAndCancelOverHTTP(t *testing.T) {
	for _, tr := range httpTransports {
		t.Run(tr.name, func(t *testing.T) {
			h := featuresHTTPHub(t, tr.typ, tr.path, tr.legacy)
			reports := make(chan mcpgram.Progress, 10)
			ctx, cancel := context.WithCancel(mcpgram.WithProgress(context.Background(), func(p mcpgram.Progress) { reports <- p }))
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := h.CallTool(ctx, local, "f", "wait", map[string]any{"count": 3, "total": 300})
				done <- err
			}()
			var got []float64
			for range 3 {
				select {
				case p := <-reports:
					if p.Total != 300 || p.Message != "waiting" {
						t.Errorf("report %+v, want one of 300, waiting", p)
					}
					got = append(got, p.Progress)
				case err := <-done:
					t.Fatalf("the call ended before its reports: %v", err)
				}
			}
			if !tr.ordered {
				slices.Sort(got)
			}
			if want := []float64{1, 2, 3}; !slices.Equal(got, want) {
				t.Errorf("progress %v, want %v", got, want)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			testenv.Eventually(t, 10*time.Second, "the server to count the cancellation", func() bool {
				return strings.Contains(call(t, h, "f", "cancelled", nil).Text(), `"cancelled":1`)
			})
		})
	}
}
