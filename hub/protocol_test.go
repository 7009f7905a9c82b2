package hub_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// The hub speaks 2026-07-28 to a server that offers it, falls back to the
// newest handshake a 2025 server speaks, and takes a pinned revision
// without asking.
func TestProtocolNegotiation(t *testing.T) {
	raw := func(mode string, extra map[string]any) map[string]any {
		e := map[string]any{"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", mode}}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	tests := []struct {
		name  string
		entry map[string]any
		want  string
	}{
		{"modern", testenv.FeaturesEntry(t, false), "2026-07-28"},
		{"legacy", testenv.FeaturesEntry(t, true), "2025-11-25"},
		// Answers server/discover with {}, as the conformance suite's
		// initialize scenario does: not a server of 2026-07-28.
		{"empty discover", raw("empty-discover", nil), "2025-06-18"},
		{"pinned", echoServer(t, map[string]any{"protocolVersion": "2025-06-18"}), "2025-06-18"},
	}
	servers := map[string]any{}
	for _, tt := range tests {
		servers[tt.name] = tt.entry
	}
	h, _ := startHub(t, servers)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server(t, h, tt.name)
			if s.Status != mcpgram.StatusRunning {
				t.Fatalf("status %s: %s", s.Status, s.Error)
			}
			if s.Protocol != tt.want {
				t.Errorf("protocol = %q, want %q", s.Protocol, tt.want)
			}
		})
	}
	t.Run("server-everything", func(t *testing.T) {
		h, _ := startHub(t, map[string]any{"everything": testenv.EverythingEntry(t)})
		if got := server(t, h, "everything").Protocol; got != "2025-11-25" {
			t.Errorf("protocol = %q, want 2025-11-25", got)
		}
	})
}

// A server that ignores server/discover is probed once: its restarts
// speak the handshake at once.
func TestProtocolIgnoredDiscoverRemembered(t *testing.T) {
	log := filepath.Join(t.TempDir(), "methods.log")
	h, _ := startHub(t, map[string]any{"mute": map[string]any{
		"command": testenv.TestServer(t, "raw"), "args": []string{"-mode", "mute-discover"},
		"env": map[string]string{"RAW_LOG": log},
	}})
	if s := server(t, h, "mute"); s.Status != mcpgram.StatusRunning || s.Protocol != "2025-06-18" {
		t.Fatalf("status %s (%s), protocol %q", s.Status, s.Error, s.Protocol)
	}
	if err := h.Restart(t.Context(), "mute"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "server/discover"); got != 1 {
		t.Errorf("server/discover sent %d times over two starts, want 1:\n%s", got, b)
	}
	if got := strings.Count(string(b), "initialize"); got != 2 {
		t.Errorf("initialize sent %d times over two starts, want 2:\n%s", got, b)
	}
}

// The hub declares exactly what it implements: elicitation in both modes
// when it has an Elicitor, nothing without; no sampling, no roots; on a
// 2025 connection, tasks (it makes task-augmented calls and receives
// none, so the capability holds nothing).
func TestProtocolCapabilities(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		for _, withElicitor := range []bool{false, true} {
			name := map[bool]string{false: "modern", true: "legacy"}[legacy] + map[bool]string{false: " without elicitor", true: " with elicitor"}[withElicitor]
			t.Run(name, func(t *testing.T) {
				var ask hub.Askers
				if withElicitor {
					ask.Elicitor = &scriptedElicitor{}
				}
				path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"f": testenv.FeaturesEntry(t, legacy)})
				h := testenv.StartAsking(t, path, fastOptions(), ask)
				var got struct {
					Protocol     string         `json:"protocol"`
					Capabilities map[string]any `json:"capabilities"`
				}
				if err := json.Unmarshal([]byte(call(t, h, "f", "client", nil).Text()), &got); err != nil {
					t.Fatal(err)
				}
				caps, _ := json.Marshal(got.Capabilities)
				want := `{}`
				if withElicitor {
					want = `{"elicitation":{"form":{},"url":{}}}`
				}
				if legacy {
					want = strings.TrimSuffix(want, "}") + `,"tasks":{}}`
					want = strings.Replace(want, `{,`, `{`, 1)
				}
				if string(caps) != want {
					t.Errorf("capabilities = %s, want %s", caps, want)
				}
			})
		}
	}
}

// Over HTTP the same holds, except over the HTTP+SSE transport, where
// mcp-go cannot answer a server's request: no elicitation is declared
// there (HTTP+SSE speaks a 2025 revision: tasks are declared; the
// Streamable HTTP server speaks 2026-07-28, where they are an extension).
func TestProtocolCapabilitiesRemote(t *testing.T) {
	clientTool := func() *mcpserver.MCPServer {
		s := mcpserver.NewMCPServer("remote", "1.0.0")
		s.AddTool(mcp.NewTool("client"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var caps any
			if req.Params.Meta != nil {
				caps = req.Params.Meta.AdditionalFields[mcp.MetaKeyClientCapabilities]
			}
			if session, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo); ok && caps == nil {
				caps = session.GetClientCapabilities()
			}
			b, _ := json.Marshal(caps)
			return mcp.NewToolResultText(string(b)), nil
		})
		return s
	}
	streamable := servertest.NewTestStreamableHTTPServer(clientTool())
	t.Cleanup(streamable.Close)
	sse := servertest.NewTestServer(clientTool())
	t.Cleanup(sse.Close)
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{
		"streamable": map[string]any{"type": hub.TypeStreamableHTTP, "url": streamable.URL + "/mcp"},
		"sse":        map[string]any{"type": hub.TypeSSE, "url": sse.URL + "/sse"},
	})
	h := testenv.StartAsking(t, path, fastOptions(), hub.Askers{Elicitor: &scriptedElicitor{}})
	for name, want := range map[string]string{"streamable": `{"elicitation":{"form":{},"url":{}}}`, "sse": `{"tasks":{}}`} {
		if got := call(t, h, name, "client", nil).Text(); got != want {
			t.Errorf("%s: capabilities %s, want %s", name, got, want)
		}
	}
}
