package hub_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// bundled returns the entries of the default settings file: the bundled
// memory, calculator and clock servers.
func bundled(tb testing.TB) map[string]any {
	return map[string]any{
		"memory":     map[string]any{"command": testenv.Bundled(tb, "mcp-memory"), "env": map[string]string{"MEMORY_DB_PATH": filepath.Join(tb.TempDir(), "memory.db")}},
		"calculator": map[string]any{"command": testenv.Bundled(tb, "mcp-calculator")},
		"clock":      map[string]any{"command": testenv.Bundled(tb, "mcp-clock")},
	}
}

// BenchmarkHubCall measures sequential echo calls through the hub against
// mcp-go's bare client on the same server, for the hub's overhead.
func BenchmarkHubCall(b *testing.B) {
	servers := []struct {
		name    string
		entry   func(testing.TB) map[string]any
		message string
		want    string
	}{
		{"go", func(tb testing.TB) map[string]any { return echoServer(tb, nil) }, "hello", "hello"},
		{"everything", func(tb testing.TB) map[string]any { return testenv.EverythingEntry(tb) }, "hello", "Echo: hello"},
	}
	for _, srv := range servers {
		// The hub sends the caller in _meta, which costs some servers
		// (server-everything) real time to handle, so the fair baseline is
		// the bare client sending the same _meta; bare-nometa shows that cost.
		for _, withMeta := range []bool{false, true} {
			name := srv.name + "/bare-nometa"
			if withMeta {
				name = srv.name + "/bare"
			}
			b.Run(name, func(b *testing.B) {
				c := bareClient(b, srv.entry(b))
				req := mcp.CallToolRequest{}
				req.Params.Name = "echo"
				req.Params.Arguments = map[string]any{"message": srv.message}
				if withMeta {
					req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{hub.MetaUserID: local.UserID, hub.MetaChatID: local.ChatID}}
				}
				ctx := context.Background()
				for b.Loop() {
					res, err := c.CallTool(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					if got := res.Content[0].(mcp.TextContent).Text; got != srv.want {
						b.Fatalf("got %q", got)
					}
				}
			})
		}
		b.Run(srv.name+"/hub", func(b *testing.B) {
			h, _ := startHub(b, map[string]any{"echo": srv.entry(b)})
			ctx := context.Background()
			for b.Loop() {
				res, err := h.CallTool(ctx, local, "echo", "echo", map[string]any{"message": srv.message})
				if err != nil {
					b.Fatal(err)
				}
				if got := res.Text(); got != srv.want {
					b.Fatalf("got %q", got)
				}
			}
		})
	}
}

// BenchmarkStart measures Start until every server answered initialize and
// tools/list: for several servers it should be about the slowest, not the
// sum.
func BenchmarkStart(b *testing.B) {
	one := func(name string) func(testing.TB) map[string]any {
		return func(tb testing.TB) map[string]any {
			return map[string]any{name: bundled(tb)[name]}
		}
	}
	sets := []struct {
		name    string
		servers func(testing.TB) map[string]any
	}{
		{"memory", one("memory")},
		{"calculator", one("calculator")},
		{"clock", one("clock")},
		{"bundled", bundled},
		{"everything", func(tb testing.TB) map[string]any { return map[string]any{"e": testenv.EverythingEntry(tb)} }},
		{"bundled+everything", func(tb testing.TB) map[string]any {
			servers := bundled(tb)
			servers["everything"] = testenv.EverythingEntry(tb)
			return servers
		}},
		{"3everything", func(tb testing.TB) map[string]any {
			return map[string]any{"e1": testenv.EverythingEntry(tb), "e2": testenv.EverythingEntry(tb), "e3": testenv.EverythingEntry(tb)}
		}},
		{"filesystem", func(tb testing.TB) map[string]any {
			node, dir := testenv.NPMPackage(tb, "@modelcontextprotocol/server-filesystem")
			return map[string]any{"fs": map[string]any{"command": node, "args": []string{filepath.Join(dir, "dist", "index.js"), tb.TempDir()}}}
		}},
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			path := testenv.WriteSettings(b, b.TempDir(), set.servers(b))
			opts := fastOptions()
			opts.NoWatch = true
			var total time.Duration
			for b.Loop() {
				h, err := hub.New(path, opts)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := h.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				for _, s := range h.Catalog().Servers {
					if s.Status != mcpgram.StatusRunning {
						b.Fatalf("%s: %s (%s)", s.Name, s.Status, s.Error)
					}
				}
				b.StopTimer()
				h.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
		})
	}
}

// BenchmarkRestartIgnoredDiscover measures the restarts of a server that
// ignores server/discover: its first start waits for it pingGrace (0.5 s)
// after the server answered the ping behind it, and its restarts,
// remembered, speak the handshake at once.
func BenchmarkRestartIgnoredDiscover(b *testing.B) {
	h, _ := startHub(b, map[string]any{"mute": map[string]any{"command": testenv.TestServer(b, "raw"), "args": []string{"-mode", "mute-discover"}}})
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		if err := h.Restart(ctx, "mute"); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/restart")
}

// bareClient starts the server of entry under mcp-go's client alone, as a
// baseline for the hub: it negotiates the revision as the hub does.
func bareClient(b *testing.B, entry map[string]any) *client.Client {
	b.Helper()
	var args []string
	if a, ok := entry["args"].([]string); ok {
		args = a
	}
	c := client.NewClient(transport.NewStdio(entry["command"].(string), nil, args...))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkHubOverhead alternates one call through the hub with one call
// of mcp-go's bare client sending the same request, each to its own
// process of the same server, so that both see the same machine load; it
// reports the mean of each and the hub's overhead.
func BenchmarkHubOverhead(b *testing.B) {
	servers := []struct {
		name  string
		entry func(testing.TB) map[string]any
	}{
		{"go", func(tb testing.TB) map[string]any { return echoServer(tb, nil) }},
		{"everything", func(tb testing.TB) map[string]any { return testenv.EverythingEntry(tb) }},
	}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			c := bareClient(b, srv.entry(b))
			h, _ := startHub(b, map[string]any{"echo": srv.entry(b)})
			req := mcp.CallToolRequest{}
			req.Params.Name = "echo"
			req.Params.Arguments = map[string]any{"message": "hello"}
			req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{hub.MetaUserID: local.UserID, hub.MetaChatID: local.ChatID}}
			ctx := context.Background()
			var bare, viaHub time.Duration
			n := 0
			for b.Loop() {
				start := time.Now()
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := h.CallTool(ctx, local, "echo", "echo", map[string]any{"message": "hello"}); err != nil {
					b.Fatal(err)
				}
				bare += mid.Sub(start)
				viaHub += time.Since(mid)
				n++
			}
			b.ReportMetric(float64(bare.Microseconds())/float64(n), "µs/bare")
			b.ReportMetric(float64(viaHub.Microseconds())/float64(n), "µs/hub")
			b.ReportMetric(100*(float64(viaHub)/float64(bare)-1), "%overhead")
		})
	}
}

// BenchmarkConcurrentCalls measures waves of 20 calls at once, each
// sleeping 100ms in the server: sharing the connection, a wave takes about
// one call's time, not twenty (TestConcurrentCallsShareTheConnection
// proves the overlap itself).
func BenchmarkConcurrentCalls(b *testing.B) {
	const n, ms = 20, 100
	h, _ := startHub(b, map[string]any{"echo": echoServer(b, nil)})
	ctx := context.Background()
	for b.Loop() {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if _, err := h.CallTool(ctx, local, "echo", "sleep", map[string]any{"ms": ms}); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	wave := float64(b.Elapsed().Milliseconds()) / float64(b.N)
	b.ReportMetric(wave, "ms/wave")
	b.ReportMetric(wave/ms, "calls-long/wave")
}

// BenchmarkCrashDetection measures how soon a call in flight fails once its
// server crashes: it should be at once, not at the call's timeout
// (TestCrashMidCallRecovers proves it fails from the crash itself).
func BenchmarkCrashDetection(b *testing.B) {
	h, _ := startHub(b, map[string]any{"echo": echoServer(b, map[string]any{"timeout": 30})})
	ctx := context.Background()
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		waitStatus(b, h, "echo", mcpgram.StatusRunning)
		inflight := make(chan error, 1)
		go func() {
			_, err := h.CallTool(ctx, local, "echo", "sleep", map[string]any{"ms": 60000})
			inflight <- err
		}()
		testenv.Eventually(b, 10*time.Second, "the sleep to be in flight", func() bool {
			stderr, _ := h.Stderr("echo")
			return strings.Contains(stderr, "echo: sleep started")
		})
		b.StartTimer()
		start := time.Now()
		_, _ = h.CallTool(ctx, local, "echo", "crash", nil)
		if err := <-inflight; !errors.Is(err, mcpgram.ErrNotRunning) {
			b.Fatalf("in-flight call: %v, want ErrNotRunning", err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/crash-to-fail")
}

// BenchmarkSettingsLoad reads a settings file of 30,000 entries: reading
// must grow with the file, not with its square.
func BenchmarkSettingsLoad(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("{\"mcpServers\": {\n")
	for i := range 30000 {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, "  \"s%d\": {\"command\": \"mcp-server-%d\", \"args\": [\"--x\"], \"disabled\": true}", i, i)
	}
	sb.WriteString("\n}}\n")
	path := filepath.Join(b.TempDir(), "mcp-settings.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		h, err := hub.New(path, hub.Options{NoWatch: true})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(h.Catalog().Servers); n != 30000 {
			b.Fatalf("%d servers", n)
		}
	}
}

// BenchmarkSandboxedStart measures what a sandbox adds to a server's
// start, from spawn to a listed catalog, and to its stop: the Go echo
// server unconfined, in bubblewrap and under Landlock.
func BenchmarkSandboxedStart(b *testing.B) {
	for _, mode := range []string{"off", "bubblewrap", "landlock"} {
		b.Run(mode, func(b *testing.B) {
			if mode != "off" {
				testenv.RequireSandbox(b, mode)
			}
			path := testenv.WriteSettings(b, b.TempDir(), map[string]any{"echo": echoServer(b, map[string]any{"sandbox": mode})})
			opts := fastOptions()
			opts.NoWatch = true
			b.ResetTimer()
			for b.Loop() {
				h, err := hub.New(path, opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				if s, _ := h.Catalog().Server("echo"); s.Status != mcpgram.StatusRunning {
					b.Fatalf("echo is %s: %s", s.Status, s.Error)
				}
				if err := h.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
