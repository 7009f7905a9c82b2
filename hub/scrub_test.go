package hub_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/hub"
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
	s := waitStatus(t, h, "remote", hub.StatusRestarting)
	_, callErr := h.CallTool(context.Background(), hub.Caller{UserID: "1"}, "remote", "x", nil)
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
	if !strings.Contains(s.Error, addr+"/mcp") {
		t.Errorf("error %q no longer says which server it tried", s.Error)
	}
}
