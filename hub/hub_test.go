package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func TestListAndCall(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, map[string]any{"autoApprove": []string{"echo"}, "timeout": 7})})

	s := server(t, h, "echo")
	if s.Status != mcpgram.StatusRunning {
		t.Fatalf("status = %s (%s), want running", s.Status, s.Error)
	}
	var names []string
	for _, tool := range s.Tools {
		names = append(names, tool.Name)
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "echo") || !slices.Contains(names, "mixed") {
		t.Errorf("tools = %v, want sorted and with echo and mixed", names)
	}
	tool, _ := s.Tool("echo")
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Properties["message"] == nil || !slices.Equal(schema.Required, []string{"message"}) {
		t.Errorf("echo schema = %s (%v), want message required", tool.InputSchema, err)
	}
	// What a server says of its tools' behaviour reaches the catalog as
	// it said it: add declares itself read-only and closed; echo says
	// what mcp-go declares by default.
	if add, _ := s.Tool("add"); !isTrue(add.Hints.ReadOnly) || !isFalse(add.Hints.OpenWorld) || !isTrue(add.Hints.Idempotent) {
		t.Errorf("add's hints = %s, want read-only, idempotent, closed world", hintsText(add.Hints))
	}
	if !isTrue(tool.Hints.Destructive) || !isTrue(tool.Hints.OpenWorld) || !isFalse(tool.Hints.ReadOnly) {
		t.Errorf("echo's hints = %s, want mcp-go's defaults (destructive, open world, not read-only)", hintsText(tool.Hints))
	}
	if !s.AutoApproves("echo") || s.AutoApproves("crash") {
		t.Errorf("AutoApprove = %v, want [echo]", s.AutoApprove)
	}
	if s.Timeout != 7*time.Second {
		t.Errorf("Timeout = %s, want 7s", s.Timeout)
	}

	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"echo", map[string]any{"message": "hi there"}, "hi there", false},
		{"fail", nil, "it went wrong", true},
		{"whoami", nil, `{"mcpgram/chat_id":"-100","mcpgram/user_id":"42"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := call(t, h, "echo", tt.tool, tt.args)
			if got := res.Text(); got != tt.want || res.IsError != tt.isError {
				t.Errorf("got %q (isError %v), want %q (isError %v)", got, res.IsError, tt.want, tt.isError)
			}
		})
	}

	_, err := h.CallTool(context.Background(), local, "nope", "echo", nil)
	if !errors.Is(err, mcpgram.ErrUnknownServer) {
		t.Errorf("call on unknown server: err = %v, want ErrUnknownServer", err)
	}
	if _, err := h.CallTool(context.Background(), local, "echo", "no_such_tool", nil); err == nil {
		t.Errorf("call of unknown tool: err = nil, want an error")
	}
}

func TestResultContent(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	res := call(t, h, "echo", "mixed", nil)
	want := []mcpgram.Content{
		{Type: mcpgram.ContentText, Text: "here"},
		{Type: mcpgram.ContentImage, MIMEType: "image/png"},
		{Type: mcpgram.ContentResource, URI: "echo://note", MIMEType: "text/plain", Text: "a note"},
		{Type: mcpgram.ContentResource, URI: "echo://blob", MIMEType: "application/octet-stream", Data: []byte{1, 2, 3}},
		{Type: mcpgram.ContentResourceLink, URI: "echo://link", Name: "link", MIMEType: "text/plain"},
	}
	if len(res.Content) != len(want) {
		t.Fatalf("got %d parts %+v, want %d", len(res.Content), res.Content, len(want))
	}
	for i, w := range want {
		g := res.Content[i]
		if w.Type == mcpgram.ContentImage {
			if g.Type != w.Type || g.MIMEType != w.MIMEType || !bytes.HasPrefix(g.Data, []byte("\x89PNG")) {
				t.Errorf("part %d = %+v, want a decoded PNG", i, g)
			}
			continue
		}
		if g.Type != w.Type || g.Text != w.Text || g.URI != w.URI || g.Name != w.Name || g.MIMEType != w.MIMEType || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("part %d = %+v, want %+v", i, g, w)
		}
	}
	if imgs := res.Images(); len(imgs) != 1 {
		t.Errorf("Images() = %d, want 1", len(imgs))
	}
}

func TestUnknownContentType(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"raw": map[string]any{"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "weird"}}})
	res := call(t, h, "raw", "weird", nil)
	if len(res.Content) != 3 || res.Content[0].Text != "before" || res.Content[2].Text != "after" {
		t.Fatalf("content = %+v, want the known parts kept around the unknown one", res.Content)
	}
	if got := res.Content[1]; got.Type != "hologram" || !strings.Contains(got.Text, "hologram") {
		t.Errorf("unknown part = %+v, want type hologram with a note", got)
	}
}

func TestConcurrentCallsShareTheConnection(t *testing.T) {
	t.Parallel()
	// meet returns only once all n calls are in the one server process at
	// once: calls that queued in the hub would never meet, and would time
	// out instead.
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"timeout": 30}))})
	pid := pidOf(t, h, "echo")
	const n = 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			res, err := h.CallTool(ctx, local, "echo", "meet", map[string]any{"n": n})
			if err == nil && res.Text() != "met" {
				err = errors.New("got " + res.Text())
			}
			if err != nil {
				errs <- err
				cancel() // no point waiting for the others
			}
		})
	}
	wg.Wait()
	close(errs)
	if err, ok := <-errs; ok {
		t.Errorf("%d calls at once did not all reach the server together: %v (and %d more failed)", n, err, len(errs))
	}
	if got := pidOf(t, h, "echo"); got != pid {
		t.Errorf("pid after the calls = %d, want %d: one process for all", got, pid)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, map[string]any{"timeout": 1})})
	start := time.Now()
	_, err := h.CallTool(context.Background(), local, "echo", "sleep", map[string]any{"ms": 60000})
	if !errors.Is(err, mcpgram.ErrTimeout) || !strings.Contains(err.Error(), "timed out after 1s") {
		t.Fatalf("err = %v, want one saying timed out after 1s", err)
	}
	// Not before the 1s, and nowhere near the 60s sleep (nor a timeout read
	// as minutes); the upper bound is only a generous sanity limit.
	if d := time.Since(start); d < time.Second || d > 10*time.Second {
		t.Errorf("timed out after %s, want 1s", d)
	}
	// The server heard of the cancellation and stopped working on it.
	testenv.Eventually(t, 5*time.Second, "the server to see the request cancelled", func() bool {
		stderr, _ := h.Stderr("echo")
		return strings.Contains(stderr, "echo: sleep cancelled")
	})
	if got := call(t, h, "echo", "echo", map[string]any{"message": "still here"}).Text(); got != "still here" {
		t.Errorf("after the timeout echo = %q, want the server still usable", got)
	}
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusRunning || s.Restarts != 0 {
		t.Errorf("after the timeout status %s, restarts %d; want running, 0", s.Status, s.Restarts)
	}
}

func TestCallerCancel(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := h.CallTool(ctx, local, "echo", "sleep", map[string]any{"ms": 10000})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the caller's context error", err)
	}
}

func TestCrashMidCallRecovers(t *testing.T) {
	t.Parallel()
	h, gate := startGatedHub(t, map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"timeout": 30}))})
	before := pidOf(t, h, "echo")

	inflight := make(chan error, 1)
	go func() {
		_, err := h.CallTool(context.Background(), local, "echo", "sleep", map[string]any{"ms": 60000})
		inflight <- err
	}()
	testenv.Eventually(t, 10*time.Second, "the sleep to be in flight", func() bool {
		stderr, _ := h.Stderr("echo")
		return strings.Contains(stderr, "echo: sleep started")
	})
	// Both calls fail from the crash itself while the restart is held
	// back: not at their 30s timeout, the 60s sleep, or the next process.
	_, err := h.CallTool(context.Background(), local, "echo", "crash", nil)
	if !errors.Is(err, mcpgram.ErrNotRunning) {
		t.Errorf("crashing call: err = %v, want ErrNotRunning", err)
	}
	if err := <-inflight; !errors.Is(err, mcpgram.ErrNotRunning) {
		t.Errorf("in-flight call: err = %v, want ErrNotRunning at the crash", err)
	}

	// The failed state is brief: the hub restarts the server at once.
	gate.open()
	testenv.Eventually(t, 5*time.Second, "the server to restart", func() bool {
		s := server(t, h, "echo")
		return s.Status == mcpgram.StatusRunning && s.Restarts >= 1
	})
	if after := pidOf(t, h, "echo"); after == before {
		t.Errorf("pid after the restart = %d, the crashed process's", after)
	}
}

// Unsandboxed: bubblewrap keeps a copy of the server's stdout open while
// it runs, so in its sandbox a server that closes its stdout and lives on
// is found out by its calls' timeout, not at once.
func TestBrokenPipeRecovers(t *testing.T) {
	t.Parallel()
	h, gate := startGatedHub(t, map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"timeout": 30}))})
	before := pidOf(t, h, "echo")
	// The call fails from the broken pipe while the restart is held back:
	// not at its 30s timeout, nor once the next process is up.
	if _, err := h.CallTool(context.Background(), local, "echo", "close_stdout", nil); !errors.Is(err, mcpgram.ErrNotRunning) {
		t.Errorf("err = %v, want ErrNotRunning at the broken pipe", err)
	}
	gate.open()
	testenv.Eventually(t, 5*time.Second, "the server to restart", func() bool {
		s := server(t, h, "echo")
		return s.Status == mcpgram.StatusRunning && s.Restarts >= 1
	})
	if pidOf(t, h, "echo") == before {
		t.Errorf("still the process with the broken pipe")
	}
	testenv.Eventually(t, 10*time.Second, "the old process to end", func() bool { return !alive(before) })
}

// A call a moment after a crash waits for the restart and runs, instead of
// failing with "not running".
func TestCallWaitsForRestart(t *testing.T) {
	t.Parallel()
	opts := fastOptions()
	opts.RestartDelay = 300 * time.Millisecond
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"echo": echoServer(t, hostPIDs)})
	h := testenv.StartHub(t, path, opts)
	before := pidOf(t, h, "echo")
	_, _ = h.CallTool(context.Background(), local, "echo", "crash", nil)
	waitStatus(t, h, "echo", mcpgram.StatusRestarting)
	res, err := h.CallTool(context.Background(), local, "echo", "echo", map[string]any{"message": "after the crash"})
	if err != nil || res.Text() != "after the crash" {
		t.Fatalf("call during the restart: %v, %v; want it run once the server is back", res, err)
	}
	if pidOf(t, h, "echo") == before {
		t.Error("the call ran on the crashed process")
	}
}

// A call to a server that is disabled, or that failed its first start,
// fails at once: nothing will bring it up by itself.
func TestCallToServerDownForGoodFailsAtOnce(t *testing.T) {
	t.Parallel()
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"off":    echoServer(t, map[string]any{"disabled": true, "timeout": 3600}),
		"broken": map[string]any{"command": "./no-such-server", "timeout": 3600},
	})
	h := testenv.StartHub(t, path, fastOptions())
	for _, name := range []string{"off", "broken"} {
		// With an hour's timeout, a call that waited would outlive the test.
		_, err := h.CallTool(context.Background(), local, name, "echo", nil)
		if !errors.Is(err, mcpgram.ErrNotRunning) {
			t.Errorf("%s: err = %v, want ErrNotRunning at once", name, err)
		}
	}
}

func TestFailedStatusShowsExitAndStderr(t *testing.T) {
	t.Parallel()
	opts := fastOptions()
	opts.RestartDelay = time.Minute // keep it failed long enough to look
	opts.MaxRestartDelay = time.Minute
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"echo": echoServer(t, map[string]any{"timeout": 1})})
	h := testenv.StartHub(t, path, opts)
	_, _ = h.CallTool(context.Background(), local, "echo", "crash", nil)
	s := waitStatus(t, h, "echo", mcpgram.StatusRestarting)
	if s.ExitCode != 3 || s.LastStderr != "fatal: crash requested" {
		t.Errorf("exit code %d, last stderr %q; want 3, %q", s.ExitCode, s.LastStderr, "fatal: crash requested")
	}
	if !strings.Contains(s.Error, "code 3") || !strings.Contains(s.Error, "fatal: crash requested") {
		t.Errorf("Error = %q, want the exit code and last stderr line", s.Error)
	}
	if len(s.Tools) != 0 {
		t.Errorf("a failed server lists %d tools, want none", len(s.Tools))
	}
	if stderr, err := h.Stderr("echo"); err != nil || !strings.Contains(stderr, "echo: starting\nfatal: crash requested\n") {
		t.Errorf("Stderr = %q, %v; want all the process wrote", stderr, err)
	}
	// A call waits for the restart up to the server's timeout (1 s here,
	// against a back-off of a minute), then fails.
	_, err := h.CallTool(context.Background(), local, "echo", "echo", map[string]any{"message": "x"})
	if !errors.Is(err, mcpgram.ErrNotRunning) || !strings.Contains(err.Error(), "still restarting after 1s") {
		t.Errorf("call on a restarting server: err = %v, want ErrNotRunning, still restarting", err)
	}
	// An explicit restart does not wait for the backoff.
	if err := h.Restart(context.Background(), "echo"); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if got := call(t, h, "echo", "echo", map[string]any{"message": "back"}).Text(); got != "back" {
		t.Errorf("after Restart echo = %q", got)
	}
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server map[string]any
		want   string
	}{
		{"missing command", map[string]any{"command": "mcpgram-no-such-command"}, `command "mcpgram-no-such-command" not found`},
		{"missing relative command", map[string]any{"command": "./bin/nothing"}, "no such file"},
		{"never initializes", map[string]any{"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "silent"}, "timeout": 1}, "no answer to initialize within 1s"},
		{"exits at once", map[string]any{"command": "sh", "args": []string{"-c", "echo 'cannot open db' >&2; exit 7"}}, "exited with code 7: cannot open db"},
		{"unset variable", map[string]any{"command": "sh", "args": []string{"${env:MCPGRAM_TEST_SURELY_UNSET}"}}, "MCPGRAM_TEST_SURELY_UNSET is not set"},
		{"unset variable in env", map[string]any{"command": "sh", "env": map[string]string{"K": "${env:MCPGRAM_TEST_SURELY_UNSET2}"}}, "MCPGRAM_TEST_SURELY_UNSET2 is not set"},
		{"VS Code input", map[string]any{"command": "sh", "args": []string{"--token=${input:api-key}"}}, "${input:api-key} asks VS Code's user for a value, and mcpgram has no one to ask"},
		{"wrong field type", map[string]any{"command": "sh", "args": "not a list"}, `"args"`},
		{"unknown type", map[string]any{"type": "carrier-pigeon", "url": "x"}, "unknown type"},
		{"remote without url", map[string]any{"type": "sse"}, "needs a url"},
		{"timeout that would overflow", map[string]any{"command": "sh", "timeout": 1e11}, "timeout must be a number of seconds from 0.1 to 86400, got 1e+11"},
		{"negative timeout", map[string]any{"command": "sh", "timeout": -5}, "timeout must be"},
		{"zero timeout", map[string]any{"command": "sh", "timeout": 0}, "timeout must be"},
		{"tiny timeout", map[string]any{"command": "sh", "timeout": 0.001}, "timeout must be"},
		{"unknown protocol version", map[string]any{"command": "sh", "protocolVersion": "2030-01-01"}, `protocolVersion "2030-01-01" is not an MCP revision mcpgram knows`},
	}
	servers := map[string]any{
		"good":            echoServer(t, nil),
		"disabled broken": map[string]any{"command": "sh", "args": []string{"${env:MCPGRAM_TEST_SURELY_UNSET}"}, "disabled": true},
	}
	for _, tt := range tests {
		servers[tt.name] = tt.server
	}
	// A sanity limit only: about the slowest failure (1s) is what Start
	// should take; BenchmarkStart measures real start times.
	start := time.Now()
	h, _ := startHub(t, servers)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Start took %s, want about the slowest failure (1s)", d)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, h, tt.name)
			if s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, tt.want) {
				t.Errorf("status %s, error %q; want failed, with %q", s.Status, s.Error, tt.want)
			}
		})
	}
	if s := server(t, h, "good"); s.Status != mcpgram.StatusRunning {
		t.Errorf("the valid server is %s (%s), want running despite the others", s.Status, s.Error)
	}
	if s := server(t, h, "disabled broken"); s.Status != mcpgram.StatusDisabled {
		t.Errorf("a disabled broken entry is %s, want disabled", s.Status)
	}
}

func TestSettingsSyntaxError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp-settings.json")
	if err := os.WriteFile(path, []byte("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := hub.New(path, fastOptions())
	if err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Fatalf("err = %v, want one naming %s:3:col", err, path)
	}
	if !strings.Contains(err.Error(), ":3:26:") {
		t.Errorf("err = %v, want column 26", err)
	}
	if _, err := hub.New(filepath.Join(t.TempDir(), "missing.json"), fastOptions()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

// Two servers of one name are both refused, naming the lines: which one
// was meant cannot be told. The other servers run.
func TestSettingsDuplicateNames(t *testing.T) {
	t.Parallel()
	echo, err := json.Marshal(testenv.TestServer(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp-settings.json")
	body := "{\n  \"mcpServers\": {\n    \"twin\": {\"command\": " + string(echo) + "},\n    \"other\": {\"command\": " + string(echo) + "},\n    \"twin\": {\"command\": \"sh\"}\n  }\n}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	h := testenv.StartHub(t, path, fastOptions())
	if s := server(t, h, "twin"); s.Status != mcpgram.StatusFailed || !strings.Contains(s.Error, `the name "twin" is given to 2 servers (lines 3 and 5)`) {
		t.Errorf("twin: %s, %q; want failed, naming lines 3 and 5", s.Status, s.Error)
	}
	if s := server(t, h, "other"); s.Status != mcpgram.StatusRunning {
		t.Errorf("other: %s (%s), want running", s.Status, s.Error)
	}
}

// A file saved with a UTF-8 byte order mark, as some Windows editors do,
// is read, and keeps its mark when the hub writes a toggle to it.
func TestSettingsByteOrderMark(t *testing.T) {
	t.Parallel()
	echo, err := json.Marshal(testenv.TestServer(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp-settings.json")
	if err := os.WriteFile(path, []byte("\xef\xbb\xbf{\"mcpServers\": {\"echo\": {\"command\": "+string(echo)+"}}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := testenv.StartHub(t, path, fastOptions())
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusRunning {
		t.Fatalf("echo: %s (%s), want running", s.Status, s.Error)
	}
	if err := h.AllowTool("echo", "echo"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\xef\xbb\xbf{")) || !bytes.Contains(b, []byte(`"autoApprove": ["echo"]`)) {
		t.Errorf("after a write the file is %q, want the mark kept and the entry patched", b)
	}
}

func TestChildEnvironment(t *testing.T) {
	// Not parallel: it sets the environment of the whole test process.
	t.Setenv("TELEGRAM_BOT_TOKEN", "123:secret-token")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("MCPGRAM_TEST_PASSED", "passed-on")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A server runs in its cwd, relative to the settings file's folder,
	// and a relative command is relative to where it runs.
	echo, err := os.ReadFile(testenv.TestServer(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "work", "echo-copy"), echo, 0o755); err != nil {
		t.Fatal(err)
	}
	path := testenv.WriteSettings(t, dir, map[string]any{"echo": map[string]any{
		"command": "./echo-copy",
		"cwd":     "work",
		"env":     map[string]string{"OWN": "mine", "FROM_BOT": "${env:MCPGRAM_TEST_PASSED}"},
	}})
	h := testenv.StartHub(t, path, fastOptions())
	env := strings.Split(call(t, h, "echo", "env", nil).Text(), "\n")
	for _, secret := range []string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "MCPGRAM_TEST_PASSED"} {
		for _, kv := range env {
			if strings.HasPrefix(kv, secret+"=") {
				t.Errorf("the child sees %s", kv)
			}
		}
	}
	for _, want := range []string{"OWN=mine", "FROM_BOT=passed-on", "PATH=" + os.Getenv("PATH")} {
		if !slices.Contains(env, want) {
			t.Errorf("child env lacks %s: %v", want, env)
		}
	}
	if got := call(t, h, "echo", "cwd", nil).Text(); got != filepath.Join(dir, "work") {
		t.Errorf("cwd = %q, want %q", got, filepath.Join(dir, "work"))
	}
}

func TestStopLeavesNoProcess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"exits on stdin close", nil},
		{"ignores SIGTERM", map[string]string{"ECHO_IGNORE_TERM": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidfile := filepath.Join(testenv.OpenDir(t), "grandchild.pid")
			env := map[string]string{"ECHO_GRANDCHILD_PIDFILE": pidfile}
			for k, v := range tt.env {
				env[k] = v
			}
			h, _ := startHub(t, map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"env": env}))})
			pid := pidOf(t, h, "echo")
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			grandchild, _ := strconv.Atoi(string(b))
			if !alive(pid) || !alive(grandchild) {
				t.Fatalf("server %d or grandchild %d not running", pid, grandchild)
			}
			if err := h.SetEnabled(context.Background(), "echo", false); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, 10*time.Second, "the server and its grandchild to be gone", func() bool {
				return !alive(pid) && !alive(grandchild)
			})
			if s := server(t, h, "echo"); s.Status != mcpgram.StatusDisabled {
				t.Errorf("status = %s, want disabled", s.Status)
			}
		})
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(testenv.OpenDir(t), "grandchild.pid")
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"echo": echoServer(t, with(hostPIDs, map[string]any{"env": map[string]string{"ECHO_GRANDCHILD_PIDFILE": pidfile}}))})
	h, err := hub.New(path, fastOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, h, "echo")
	b, _ := os.ReadFile(pidfile)
	grandchild, _ := strconv.Atoi(string(b))
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) || alive(grandchild) {
		t.Errorf("after Close: server alive %v, grandchild alive %v", alive(pid), alive(grandchild))
	}
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusStopped {
		t.Errorf("status after Close = %s, want stopped", s.Status)
	}
}

func TestTogglePersistsAndKeepsOtherFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp-settings.json")
	writeJSON(t, path, map[string]any{
		"x-top": map[string]any{"keep": true},
		"mcpServers": map[string]any{
			"echo": echoServer(t, with(hostPIDs, map[string]any{
				"alwaysAllow": []string{"legacy"},
				"x-custom":    map[string]any{"nested": []any{1.0, "two"}},
				"autoApprove": []string{"echo"},
			})),
			"other": map[string]any{"command": "mcpgram-no-such-command", "disabled": true, "x-other": "kept"},
		},
	})
	before := readJSON(t, path)
	h := testenv.StartHub(t, path, fastOptions())
	pid := pidOf(t, h, "echo")
	version := h.Catalog().Version

	if err := h.AllowTool("echo", "mixed"); err != nil {
		t.Fatal(err)
	}
	if err := h.AllowTool("echo", "mixed"); err != nil { // twice is once
		t.Fatal(err)
	}
	c := h.Catalog()
	if s, _ := c.Server("echo"); !s.AutoApproves("mixed") || c.Version == version {
		t.Errorf("after AllowTool: autoApprove %v, version %d (was %d)", s.AutoApprove, c.Version, version)
	}
	if err := h.SetEnabled(context.Background(), "echo", false); err != nil {
		t.Fatal(err)
	}
	if s := server(t, h, "echo"); s.Status != mcpgram.StatusDisabled {
		t.Errorf("status = %s, want disabled", s.Status)
	}
	if _, err := h.CallTool(context.Background(), local, "echo", "echo", map[string]any{"message": "x"}); !errors.Is(err, mcpgram.ErrNotRunning) {
		t.Errorf("call on disabled server: err = %v, want ErrNotRunning", err)
	}

	after := readJSON(t, path)
	want := before
	wantEcho := want["mcpServers"].(map[string]any)["echo"].(map[string]any)
	wantEcho["disabled"] = true
	wantEcho["autoApprove"] = []any{"echo", "mixed"}
	gotJSON, _ := json.Marshal(after)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("settings after toggles:\n got %s\nwant %s", gotJSON, wantJSON)
	}

	if err := h.SetEnabled(context.Background(), "echo", true); err != nil {
		t.Fatal(err)
	}
	if got := call(t, h, "echo", "echo", map[string]any{"message": "on"}).Text(); got != "on" {
		t.Errorf("after enabling echo = %q", got)
	}
	if pidOf(t, h, "echo") == pid {
		t.Errorf("enabled server runs the old process")
	}
	if err := h.SetEnabled(context.Background(), "nope", true); !errors.Is(err, mcpgram.ErrUnknownServer) {
		t.Errorf("SetEnabled(nope): err = %v, want ErrUnknownServer", err)
	}
	// Enabling a server that cannot start says why, and stays written.
	if err := h.SetEnabled(context.Background(), "other", true); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("enabling a broken server: err = %v, want its reason", err)
	}
	if d := readJSON(t, path)["mcpServers"].(map[string]any)["other"].(map[string]any)["disabled"]; d != false {
		t.Errorf("other disabled = %v, want false", d)
	}
}

func TestWritesKeepTheLayout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp-settings.json")
	before := `{
	"x-top": 1,
	"mcpServers": {
		"a": {"command": "mcpgram-no-such-command", "args": ["x",  "y"]},
		"b": {
			"command": "mcpgram-no-such-command",
			"disabled": false,
			"x-unknown": {"deep": [1, 2]}
		},
		"c": {}
	}
}
`
	want := `{
	"x-top": 1,
	"mcpServers": {
		"a": {"command": "mcpgram-no-such-command", "args": ["x",  "y"], "disabled": true},
		"b": {
			"command": "mcpgram-no-such-command",
			"disabled": true,
			"x-unknown": {"deep": [1, 2]},
			"autoApprove": ["t", "u"]
		},
		"c": {"autoApprove": ["t"]}
	}
}
`
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	h := testenv.StartHub(t, path, fastOptions())
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { return h.SetEnabled(ctx, "a", false) },
		func() error { return h.SetEnabled(ctx, "b", false) },
		func() error { return h.AllowTool("b", "t") },
		func() error { return h.AllowTool("b", "u") },
		func() error { return h.AllowTool("c", "t") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("settings after the writes:\n%s\nwant:\n%s", got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after the writes = %v, %v; want 0600 kept", fi.Mode(), err)
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

func TestOwnWritesDoNotRestart(t *testing.T) {
	t.Parallel()
	h, path := startHub(t, map[string]any{"echo": echoServer(t, hostPIDs), "b": echoServer(t, nil)})
	pid := pidOf(t, h, "echo")
	if err := h.AllowTool("echo", "echo"); err != nil {
		t.Fatal(err)
	}
	if err := h.SetEnabled(context.Background(), "b", false); err != nil {
		t.Fatal(err)
	}
	// An edit of our own after the hub's writes: the watcher handles events
	// in order, so once the catalog shows it, every reload the hub's writes
	// caused is done, or was folded into this one, which read them too.
	settings := readJSON(t, path)
	settings["mcpServers"].(map[string]any)["echo"].(map[string]any)["autoApprove"] = []string{"echo", "pid"}
	writeJSON(t, path, settings)
	testenv.Eventually(t, 10*time.Second, "the edit after the hub's writes", func() bool {
		return server(t, h, "echo").AutoApproves("pid")
	})
	if got := pidOf(t, h, "echo"); got != pid {
		t.Errorf("echo restarted after the hub's own write: pid %d, was %d", got, pid)
	}
	if s := server(t, h, "b"); s.Status != mcpgram.StatusDisabled {
		t.Errorf("b = %s, want disabled", s.Status)
	}
}

func TestWatchReconciles(t *testing.T) {
	t.Parallel()
	servers := map[string]any{
		"same":    echoServer(t, hostPIDs),
		"changed": echoServer(t, hostPIDs),
		"removed": echoServer(t, hostPIDs),
		"toggled": echoServer(t, nil),
	}
	logs := &testenv.Buffer{}
	opts := fastOptions()
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	path := testenv.WriteSettings(t, t.TempDir(), servers)
	h := testenv.StartHub(t, path, opts)
	samePID, changedPID, removedPID := pidOf(t, h, "same"), pidOf(t, h, "changed"), pidOf(t, h, "removed")

	delete(servers, "removed")
	servers["changed"] = echoServer(t, with(hostPIDs, map[string]any{"env": map[string]string{"NEW": "1"}}))
	servers["added"] = echoServer(t, map[string]any{"autoAprove": []string{"echo"}})
	servers["toggled"] = echoServer(t, map[string]any{"disabled": true})
	writeJSON(t, path, map[string]any{"mcpServers": servers})

	testenv.Eventually(t, 10*time.Second, "the edit to be reconciled", func() bool {
		c := h.Catalog()
		_, hasRemoved := c.Server("removed")
		added, _ := c.Server("added")
		toggled, _ := c.Server("toggled")
		return !hasRemoved && added.Status == mcpgram.StatusRunning && toggled.Status == mcpgram.StatusDisabled
	})
	testenv.Eventually(t, 10*time.Second, "the changed server to restart with its new env", func() bool {
		res, err := h.CallTool(context.Background(), local, "changed", "env", nil)
		return err == nil && strings.Contains(res.Text(), "NEW=1")
	})
	testenv.Eventually(t, 5*time.Second, "the removed server's process to end", func() bool { return !alive(removedPID) })
	// An edit that brings in a field the hub does not read is warned of.
	if w := h.Warnings(); len(w) != 1 || !strings.Contains(w[0], `server "added": unknown field "autoAprove" (did you mean "autoApprove"?)`) {
		t.Errorf("Warnings() = %q, want the mistyped field", w)
	}
	if !strings.Contains(logs.String(), `unknown field \"autoAprove\"`) {
		t.Errorf("the log does not warn of the mistyped field:\n%s", logs.String())
	}
	if got := pidOf(t, h, "same"); got != samePID {
		t.Errorf("unchanged server restarted: pid %d, was %d", got, samePID)
	}
	if got := pidOf(t, h, "changed"); got == changedPID {
		t.Errorf("changed server not restarted")
	}
	if _, err := h.CallTool(context.Background(), local, "removed", "echo", nil); !errors.Is(err, mcpgram.ErrUnknownServer) {
		t.Errorf("call on removed server: err = %v, want ErrUnknownServer", err)
	}

	// A broken edit changes nothing.
	if err := os.WriteFile(path, []byte(`{"mcpServers": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The hub says so once it has read the broken file and given up on it.
	testenv.Eventually(t, 10*time.Second, "the broken edit to be refused", func() bool {
		return strings.Contains(logs.String(), "settings file changed but cannot be used")
	})
	if got := pidOf(t, h, "same"); got != samePID {
		t.Errorf("a broken edit restarted a server")
	}
}

func TestCatalogRefreshOnListChanged(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{"echo": echoServer(t, nil)})
	version := h.Catalog().Version
	call(t, h, "echo", "add_tool", map[string]any{"name": "extra"})
	testenv.Eventually(t, 5*time.Second, "the new tool in the catalog", func() bool {
		_, ok := server(t, h, "echo").Tool("extra")
		return ok
	})
	if h.Catalog().Version == version {
		t.Errorf("catalog version did not change")
	}
	if got := call(t, h, "echo", "extra", nil).Text(); got != "extra" {
		t.Errorf("extra = %q", got)
	}

	call(t, h, "echo", "add_resource", nil)
	testenv.Eventually(t, 5*time.Second, "the new resource in the catalog", func() bool {
		for _, r := range server(t, h, "echo").Resources {
			if r.URI == "echo://added" {
				return r.MIMEType == "text/plain"
			}
		}
		return false
	})
	res, err := h.ReadResource(context.Background(), local, "echo", "echo://added")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Type != mcpgram.ContentResource || res.Text() != "read by 42" {
		t.Errorf("ReadResource = %+v, want the text with the caller from _meta", res.Content)
	}
}

func TestStartIsConcurrent(t *testing.T) {
	t.Parallel()
	// Each server answers initialize only once all four processes exist:
	// started one after another, the first would wait for the others until
	// its timeout and fail.
	const n = 4
	met := t.TempDir()
	wait := `touch "$0/$1"; while [ "$(ls "$0" | wc -l)" -lt ` + strconv.Itoa(n) + ` ]; do sleep 0.05; done; exec "$2"`
	servers := map[string]any{}
	for i := range n {
		name := "s" + strconv.Itoa(i)
		servers[name] = map[string]any{"command": "sh", "args": []string{"-c", wait, met, name, testenv.TestServer(t, "echo")}, "timeout": 20}
	}
	h, _ := startHub(t, servers)
	for i := range n {
		if s := server(t, h, "s"+strconv.Itoa(i)); s.Status != mcpgram.StatusRunning {
			t.Errorf("%s is %s (%s), want running: servers started one at a time", s.Name, s.Status, s.Error)
		}
	}
}

// A restartGate holds a hub's restarts back until opened: it blocks the
// run loop in its "restarting server" log line, which comes after the lost
// connection is torn down and before the wait for the next process.
type restartGate struct {
	once sync.Once
	c    chan struct{}
}

func (g *restartGate) open() { g.once.Do(func() { close(g.c) }) }

func (g *restartGate) Enabled(context.Context, slog.Level) bool { return true }
func (g *restartGate) WithAttrs([]slog.Attr) slog.Handler       { return g }
func (g *restartGate) WithGroup(string) slog.Handler            { return g }
func (g *restartGate) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "restarting server" {
		<-g.c
	}
	return nil
}

// startGatedHub starts a hub like startHub whose restarts wait for the
// gate. The gate opens at cleanup, before the hub closes, so that Close
// never waits on it.
func startGatedHub(t *testing.T, servers map[string]any) (*hub.Hub, *restartGate) {
	t.Helper()
	gate := &restartGate{c: make(chan struct{})}
	opts := fastOptions()
	opts.Logger = slog.New(gate)
	path := testenv.WriteSettings(t, t.TempDir(), servers)
	h := testenv.StartHub(t, path, opts)
	t.Cleanup(gate.open) // cleanups run last first: before the hub's Close
	return h, gate
}

// restartLog records the delays the hub logs before each restart.
type restartLog struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (l *restartLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *restartLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *restartLog) WithGroup(string) slog.Handler            { return l }
func (l *restartLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "restarting server" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "in" {
			l.mu.Lock()
			l.delays = append(l.delays, a.Value.Duration())
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

func (l *restartLog) first(n int) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.delays) < n {
		return nil
	}
	return slices.Clone(l.delays[:n])
}

func TestRestartBackoff(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	tests := []struct {
		name         string
		healthyAfter time.Duration
		want         []time.Duration
	}{
		{"doubles up to the limit", time.Hour, []time.Duration{20 * ms, 40 * ms, 80 * ms, 160 * ms, 160 * ms}},
		{"starts over after a healthy run", time.Nanosecond, []time.Duration{20 * ms, 20 * ms, 20 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := &restartLog{}
			opts := fastOptions()
			opts.Logger = slog.New(log)
			opts.RestartDelay, opts.MaxRestartDelay, opts.HealthyAfter = 20*ms, 160*ms, tt.healthyAfter
			path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"echo": echoServer(t, nil)})
			h := testenv.StartHub(t, path, opts)
			// Crash each process once it runs: a crash at a set time after
			// start could come before initialize on a busy machine, a
			// failed start that does not count as a run.
			for i := range len(tt.want) {
				testenv.Eventually(t, 10*time.Second, "the server to run again", func() bool {
					s := server(t, h, "echo")
					return s.Status == mcpgram.StatusRunning && s.Restarts == i
				})
				if _, err := h.CallTool(context.Background(), local, "echo", "crash", nil); !errors.Is(err, mcpgram.ErrNotRunning) {
					t.Fatalf("crash %d: err = %v, want ErrNotRunning", i+1, err)
				}
			}
			var got []time.Duration
			testenv.Eventually(t, 10*time.Second, "the restarts", func() bool {
				got = log.first(len(tt.want))
				return got != nil
			})
			if !slices.Equal(got, tt.want) {
				t.Errorf("delays = %v, want %v", got, tt.want)
			}
			if s := server(t, h, "echo"); s.Restarts < len(tt.want)-1 {
				t.Errorf("Restarts = %d, want at least %d", s.Restarts, len(tt.want)-1)
			}
		})
	}
}

// A tool that acts for one user says so in its _meta (MetaPerUser), as
// the memory server does, or the operator says it of a whole server
// ("perUser" in its settings entry): the catalog carries both, for the
// agent to keep such results from other members of a group.
func TestPerUserDeclared(t *testing.T) {
	t.Parallel()
	h, _ := startHub(t, map[string]any{
		"echo":  echoServer(t, nil),
		"mine":  echoServer(t, map[string]any{"perUser": true}),
		"wrong": echoServer(t, map[string]any{"perUser": "yes"}),
	})
	echo := server(t, h, "echo")
	keep, _ := echo.Tool("keep")
	if !keep.PerUser || echo.PerUser {
		t.Errorf("keep declares it acts per user: tool %v, server %v; want true, false", keep.PerUser, echo.PerUser)
	}
	if !echo.ActsPerUser("keep", "") || echo.ActsPerUser("echo", "") {
		t.Errorf("ActsPerUser: keep %v, echo %v; want true, false", echo.ActsPerUser("keep", ""), echo.ActsPerUser("echo", ""))
	}
	if !echo.ActsPerUser("", "echo://added") {
		t.Error("a resource of a server with a per-user tool is not read per user")
	}
	if mine := server(t, h, "mine"); !mine.PerUser || !mine.ActsPerUser("echo", "") {
		t.Errorf("a server set perUser: %+v", mine.PerUser)
	}
	if wrong := server(t, h, "wrong"); wrong.Status != mcpgram.StatusFailed || !strings.Contains(wrong.Error, "perUser") {
		t.Errorf("perUser not a boolean: status %s, error %q; want failed, naming the field", wrong.Status, wrong.Error)
	}
}

// StartServers starts the servers named and leaves the others stopped; a
// name the settings file does not have is ErrUnknownServer.
func TestStartServers(t *testing.T) {
	t.Parallel()
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"a": echoServer(t, nil), "b": echoServer(t, nil)})
	h := testenv.NewHub(t, path, fastOptions())
	if err := h.StartServers(context.Background(), "nope"); !errors.Is(err, mcpgram.ErrUnknownServer) {
		t.Errorf("StartServers(nope) = %v, want ErrUnknownServer", err)
	}
	if err := h.StartServers(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if a, b := server(t, h, "a"), server(t, h, "b"); a.Status != mcpgram.StatusRunning || b.Status != mcpgram.StatusStopped {
		t.Errorf("a is %s, b is %s; want a running and b stopped", a.Status, b.Status)
	}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

func hintsText(h mcpgram.Hints) string {
	show := func(b *bool) string {
		if b == nil {
			return "nil"
		}
		return strconv.FormatBool(*b)
	}
	return fmt.Sprintf("{ReadOnly: %s, Destructive: %s, Idempotent: %s, OpenWorld: %s}", show(h.ReadOnly), show(h.Destructive), show(h.Idempotent), show(h.OpenWorld))
}
