package catalog_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/catalog"
)

// A server is down when it failed, retried or not; Problem says why in
// one line, the cause and its fix where the hub named one.
func TestProblem(t *testing.T) {
	tests := []struct {
		name string
		s    catalog.ServerInfo
		down bool
		want string
	}{
		{"running", catalog.ServerInfo{Status: catalog.StatusRunning}, false, ""},
		{"starting", catalog.ServerInfo{Status: catalog.StatusStarting}, false, ""},
		{"disabled", catalog.ServerInfo{Status: catalog.StatusDisabled}, false, ""},
		{"stopped", catalog.ServerInfo{Status: catalog.StatusStopped}, false, ""},
		{"failed", catalog.ServerInfo{Status: catalog.StatusFailed, Error: "exited with code 1"}, true, "failed: exited with code 1"},
		{"restarting", catalog.ServerInfo{Status: catalog.StatusRestarting, Error: "connection lost"}, true, "restarting: connection lost"},
		{"starting again", catalog.ServerInfo{Status: catalog.StatusStarting, Error: "connection lost"}, true, "restarting: connection lost"},
		{"needs sign-in", catalog.ServerInfo{Status: catalog.StatusFailed, Cause: catalog.CauseSignIn, Error: "needs sign-in: run mcpgram mcp login t"}, true, "needs sign-in: run mcpgram mcp login t"},
		{"unreachable", catalog.ServerInfo{Status: catalog.StatusRestarting, Cause: catalog.CauseUnreachable, Error: "unreachable: connection refused"}, true, "unreachable: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tt.s.Down(), tt.down; got != want {
				t.Errorf("Down = %v, want %v", got, want)
			}
			if got, want := tt.s.Problem(), tt.want; got != want {
				t.Errorf("Problem = %q, want %q", got, want)
			}
		})
	}
}
