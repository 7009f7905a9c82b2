package mcpgram_test

import (
	"testing"

	"github.com/mcpgram/mcpgram"
)

// A server is down when it failed, retried or not; Problem says why in
// one line, the cause and its fix where the hub named one.
func TestProblem(t *testing.T) {
	tests := []struct {
		name string
		s    mcpgram.ServerInfo
		down bool
		want string
	}{
		{"running", mcpgram.ServerInfo{Status: mcpgram.StatusRunning}, false, ""},
		{"starting", mcpgram.ServerInfo{Status: mcpgram.StatusStarting}, false, ""},
		{"disabled", mcpgram.ServerInfo{Status: mcpgram.StatusDisabled}, false, ""},
		{"stopped", mcpgram.ServerInfo{Status: mcpgram.StatusStopped}, false, ""},
		{"failed", mcpgram.ServerInfo{Status: mcpgram.StatusFailed, Error: "exited with code 1"}, true, "failed: exited with code 1"},
		{"restarting", mcpgram.ServerInfo{Status: mcpgram.StatusRestarting, Error: "connection lost"}, true, "restarting: connection lost"},
		{"starting again", mcpgram.ServerInfo{Status: mcpgram.StatusStarting, Error: "connection lost"}, true, "restarting: connection lost"},
		{"needs sign-in", mcpgram.ServerInfo{Status: mcpgram.StatusFailed, Cause: mcpgram.CauseSignIn, Error: "needs sign-in: run mcpgram mcp login t"}, true, "needs sign-in: run mcpgram mcp login t"},
		{"unreachable", mcpgram.ServerInfo{Status: mcpgram.StatusRestarting, Cause: mcpgram.CauseUnreachable, Error: "unreachable: connection refused"}, true, "unreachable: connection refused"},
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
