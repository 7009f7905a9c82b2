package hub_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	"github.com/mcpgram/mcpgram/hub"
)

type authKey struct{}

// remoteMCP is an MCP server reached over HTTP, the network edge of a
// remote entry, whose one tool reports the Authorization header and _meta
// it was called with.
func remoteMCP() *mcpserver.MCPServer {
	s := mcpserver.NewMCPServer("remote", "1.0.0")
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		got := map[string]any{"auth": ctx.Value(authKey{})}
		if req.Params.Meta != nil {
			got["user"] = req.Params.Meta.AdditionalFields[hub.MetaUserID]
		}
		b, _ := json.Marshal(got)
		return mcp.NewToolResultText(string(b)), nil
	})
	return s
}

func withAuth(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
}

func TestRemoteServers(t *testing.T) {
	t.Setenv("MCPGRAM_TEST_REMOTE_TOKEN", "t0ken")
	streamable := servertest.NewTestStreamableHTTPServer(remoteMCP(), mcpserver.WithHTTPContextFunc(withAuth))
	t.Cleanup(streamable.Close)
	sse := servertest.NewTestServer(remoteMCP(), mcpserver.WithSSEContextFunc(withAuth))
	t.Cleanup(sse.Close)

	tests := []struct {
		name string
		ts   *httptest.Server
		typ  string
		path string
	}{
		{"streamable", streamable, hub.TypeStreamableHTTP, "/mcp"},
		{"sse", sse, hub.TypeSSE, "/sse"},
	}
	servers := map[string]any{}
	for _, tt := range tests {
		servers[tt.name] = map[string]any{
			"type":    tt.typ,
			"url":     tt.ts.URL + tt.path,
			"headers": map[string]string{"Authorization": "Bearer ${env:MCPGRAM_TEST_REMOTE_TOKEN}"},
		}
	}
	h, _ := startHub(t, servers)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := server(t, h, tt.name); s.Status != hub.StatusRunning {
				t.Fatalf("status = %s (%s)", s.Status, s.Error)
			}
			got := call(t, h, tt.name, "whoami", nil).Text()
			if want := `{"auth":"Bearer t0ken","user":"42"}`; got != want {
				t.Errorf("whoami = %s, want %s", got, want)
			}
		})
	}
}

// A remote server that is down when the bot starts is retried, and runs
// once it comes up; a local one that fails at start is not (see
// TestStartFailures).
func TestRemoteServerDownAtStartComesBack(t *testing.T) {
	t.Setenv("MCPGRAM_TEST_REMOTE_TOKEN", "t0ken")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down: connections are refused
	h, _ := startHub(t, map[string]any{"late": map[string]any{
		"type":    hub.TypeStreamableHTTP,
		"url":     "http://" + addr + "/mcp",
		"headers": map[string]string{"Authorization": "Bearer ${env:MCPGRAM_TEST_REMOTE_TOKEN}"},
	}})
	if s := server(t, h, "late"); s.Status == hub.StatusRunning {
		t.Fatalf("status = %s before the server is up", s.Status)
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken again before the test could reuse it: %v", addr, err)
	}
	srv := &http.Server{Handler: mcpserver.NewStreamableHTTPServer(remoteMCP(), mcpserver.WithHTTPContextFunc(withAuth))}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	waitStatus(t, h, "late", hub.StatusRunning)
	if got, want := call(t, h, "late", "whoami", nil).Text(), `{"auth":"Bearer t0ken","user":"42"}`; got != want {
		t.Errorf("whoami = %s, want %s", got, want)
	}
}
