package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A remote server's URL may carry a secret from ${env:VAR}; its failure
// reason goes to the log, /servers and, through errors, the model, so the
// credentials and query never appear there.
func TestRemoteFailureHidesURLSecrets(t *testing.T) {
	t.Setenv("MCPGRAM_TEST_URL_SECRET", "s3cr3t-query-value")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused from now on
	h, _ := startHub(t, map[string]any{
		"remote": map[string]any{"type": "streamableHttp", "url": "http://alice:pa55word@" + addr + "/mcp?key=${env:MCPGRAM_TEST_URL_SECRET}", "timeout": 1},
	})
	// A remote server is retried, so it may be between two tries.
	s := waitStatus(t, h, "remote", mcpgram.StatusRestarting)
	_, callErr := h.CallTool(context.Background(), mcpgram.Caller{UserID: "1"}, "remote", "x", nil)
	if callErr == nil {
		t.Fatal("a call to a failed remote server succeeded")
	}
	for _, text := range []string{s.Error, s.LastStderr, callErr.Error()} {
		for _, secret := range []string{"s3cr3t-query-value", "pa55word"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q shows a secret", text)
			}
		}
	}
	if !strings.Contains(s.Error, addr) {
		t.Errorf("error %q no longer says which server it tried", s.Error)
	}
}

// mcp-go's HTTP transports log to the server's log, at debug level and
// scrubbed: a 2025 server whose GET stream breaks is retried every second,
// with the URL, query and all, in the transport's error.
func TestTransportLogHidesURLSecrets(t *testing.T) {
	t.Setenv("MCPGRAM_TEST_URL_SECRET", "s3cr3t-query-value")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close() // the stream breaks: the transport logs the URL
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"r","version":"1"}}}`, req.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, req.ID)
		case "":
			w.WriteHeader(http.StatusAccepted)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, req.ID)
		}
	}))
	t.Cleanup(ts.Close)
	var log testenv.Buffer
	opts := fastOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"remote": map[string]any{"type": "streamableHttp", "url": ts.URL + "/mcp?key=${env:MCPGRAM_TEST_URL_SECRET}"},
	})
	h := testenv.StartHub(t, path, opts)
	testenv.Running(t, h)
	testenv.Eventually(t, 10*time.Second, "the transport to log its retry", func() bool {
		return strings.Contains(log.String(), "failed to listen")
	})
	got := log.String()
	if strings.Contains(got, "s3cr3t-query-value") {
		t.Errorf("the log shows the URL's secret:\n%s", got)
	}
	if !strings.Contains(got, ts.URL+"/mcp") {
		t.Errorf("the log no longer says which URL failed:\n%s", got)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.Contains(line, "failed to listen") && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("a transport line above debug: %s", line)
		}
	}
}
