package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/server/servertest"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/oauth"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
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
			if s := server(t, h, tt.name); s.Status != mcpgram.StatusRunning {
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
	if s := server(t, h, "late"); s.Status == mcpgram.StatusRunning {
		t.Fatalf("status = %s before the server is up", s.Status)
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken again before the test could reuse it: %v", addr, err)
	}
	srv := &http.Server{Handler: mcpserver.NewStreamableHTTPServer(remoteMCP(), mcpserver.WithHTTPContextFunc(withAuth))}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	waitStatus(t, h, "late", mcpgram.StatusRunning)
	if got, want := call(t, h, "late", "whoami", nil).Text(), `{"auth":"Bearer t0ken","user":"42"}`; got != want {
		t.Errorf("whoami = %s, want %s", got, want)
	}
}

// A remote server that cannot serve says why, naming the fix, in one
// line without the MCP client's repeated words: one that needs a sign-in
// nobody is there to give, one whose kept sign-in does not open with the
// key (OAUTH_KEY changed), one where no key can keep a sign-in, one that
// refuses connections, and one that answers with an error. Those that
// wait for the operator stay failed (calls fail at once); an unreachable
// one is retried, and calls wait for it. Every one is down.
func TestRemoteServerStatuses(t *testing.T) {
	fake := oauthfake.Start(t)
	db := testenv.SQLite(t, "")
	manager := func(key string) *oauth.Manager {
		m, err := oauth.New(oauth.Options{Store: db, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// "kept" is signed in to with one key, and read with another.
	before := manager("the-key-it-was-made-with-0123456789")
	before.SetInteractive(oauth.Loopback(oauthfake.Browse))
	if err := before.Login(t.Context(), mcpgram.SignIn{Server: "kept", ServerURL: fake.URL() + "/mcp"}, nil); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	// One that takes each connection and closes it at once.
	hangsUp := listen(t)

	remote := func(url string) map[string]any {
		return map[string]any{"type": hub.TypeStreamableHTTP, "url": url, "timeout": 10}
	}
	tests := []struct {
		name   string
		auth   *oauth.Manager
		url    string
		status mcpgram.Status
		cause  mcpgram.Cause
		want   string // the whole Error where cause is set, else a part
	}{
		{"signin", manager(accountsKey), fake.URL() + "/mcp", mcpgram.StatusFailed, mcpgram.CauseSignIn, "needs sign-in: run mcpgram mcp login signin"},
		{"kept", manager(accountsKey), fake.URL() + "/mcp", mcpgram.StatusFailed, mcpgram.CauseKey, "sign-in unusable: OAUTH_KEY changed? Set it back, or run mcpgram mcp login kept"},
		{"nokey", manager(""), fake.URL() + "/mcp", mcpgram.StatusFailed, mcpgram.CauseSignIn, "needs sign-in, which needs OAUTH_KEY: set it (the same on every instance), then run mcpgram mcp login nokey"},
		{"refused", nil, "http://" + closed + "/mcp", mcpgram.StatusRestarting, mcpgram.CauseUnreachable, "unreachable: connection refused (" + closed + ")"},
		{"broken", nil, broken.URL + "/mcp", mcpgram.StatusRestarting, "", "initialize: request failed with status 500: down for maintenance"},
		{"hangsup", nil, "http://" + hangsUp + "/mcp", mcpgram.StatusRestarting, "", `initialize: failed to send request: Post "http://` + hangsUp + `/mcp": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := testenv.WriteSettings(t, t.TempDir(), map[string]any{tt.name: remote(tt.url)})
			opts := fastOptions()
			// Slow retries: the status is read between two.
			opts.RestartDelay, opts.MaxRestartDelay = time.Minute, time.Minute
			if tt.auth != nil {
				opts.Auth = tt.auth
			}
			h := testenv.StartHub(t, path, opts)
			s := waitStatus(t, h, tt.name, tt.status)
			if got, want := s.Cause, tt.cause; got != want {
				t.Errorf("cause = %q, want %q (error %q)", got, want, s.Error)
			}
			if tt.cause != "" && s.Error != tt.want || !strings.Contains(s.Error, tt.want) {
				t.Errorf("error = %q, want %q", s.Error, tt.want)
			}
			for _, twice := range []string{"failed to send request: failed to send request", "transport error"} {
				if strings.Contains(s.Error, twice) {
					t.Errorf("error %q says %q", s.Error, twice)
				}
			}
			if !s.Down() || s.Problem() == "" {
				t.Errorf("Down = %v, Problem = %q; want it down, saying why", s.Down(), s.Problem())
			}
			if tt.status == mcpgram.StatusFailed {
				if _, err := h.CallTool(t.Context(), local, tt.name, "whoami", nil); !errors.Is(err, mcpgram.ErrNotRunning) {
					t.Errorf("call = %v, want ErrNotRunning", err)
				}
			}
		})
	}
}
