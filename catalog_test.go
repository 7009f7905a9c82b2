package mcpgram_test

import (
	"slices"
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

// The model's view of a catalog lacks the tools whose visibility leaves
// the model out, as an app's lacks those that leave apps out; the
// catalog itself is left whole, and a server that declares a hidden tool
// per user still reads its resources per user.
func TestCatalogFor(t *testing.T) {
	tools := []mcpgram.Tool{
		{Name: "both"},
		{Name: "app_only", App: mcpgram.ToolApp{ResourceURI: "ui://s/page", Hidden: mcpgram.AudienceModel}},
		{Name: "model_only", App: mcpgram.ToolApp{Hidden: mcpgram.AudienceApp}},
		{Name: "nobody", App: mcpgram.ToolApp{Hidden: mcpgram.AudienceModel | mcpgram.AudienceApp}},
	}
	cat := mcpgram.Catalog{Version: 7, Servers: []mcpgram.ServerInfo{
		{Name: "plain", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "a"}}},
		{Name: "s", Status: mcpgram.StatusRunning, Tools: tools},
		{Name: "u", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
			{Name: "shown"}, {Name: "mine", PerUser: true, App: mcpgram.ToolApp{Hidden: mcpgram.AudienceModel}},
		}},
	}}
	names := func(c mcpgram.Catalog, server string) []string {
		s, _ := c.Server(server)
		var out []string
		for _, t := range s.Tools {
			out = append(out, t.Name)
		}
		return out
	}
	for _, tt := range []struct {
		audience mcpgram.Audience
		want     []string
	}{
		{mcpgram.AudienceModel, []string{"both", "model_only"}},
		{mcpgram.AudienceApp, []string{"both", "app_only"}},
	} {
		view := cat.For(tt.audience)
		if got := names(view, "s"); !slices.Equal(got, tt.want) {
			t.Errorf("For(%d): tools %q, want %q", tt.audience, got, tt.want)
		}
		if view.Version != cat.Version {
			t.Errorf("For(%d): version %d, want %d", tt.audience, view.Version, cat.Version)
		}
		if &view.Servers[0].Tools[0] != &cat.Servers[0].Tools[0] {
			t.Errorf("For(%d) copied the tools of a server that hides none", tt.audience)
		}
	}
	if got := names(cat, "s"); len(got) != len(tools) {
		t.Errorf("For changed the catalog: tools %q", got)
	}
	model := cat.For(mcpgram.AudienceModel)
	if got := names(model, "u"); !slices.Equal(got, []string{"shown"}) {
		t.Errorf("model's tools of u: %q", got)
	}
	u, _ := model.Server("u")
	if !u.ActsPerUser("", "notes://mine") {
		t.Error("hiding a per-user tool made the server's resources shared")
	}
	if s, _ := model.Server("s"); s.ActsPerUser("", "notes://x") {
		t.Error("a server with no per-user tool reads per user")
	}
	// A catalog that hides nothing from an audience is returned as it is.
	plain := mcpgram.Catalog{Servers: cat.Servers[:1]}
	if got := plain.For(mcpgram.AudienceModel); &got.Servers[0] != &plain.Servers[0] {
		t.Error("For copied a catalog that hides nothing")
	}
}
