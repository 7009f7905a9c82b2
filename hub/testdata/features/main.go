// Command features is the MCP server whose tools use the client features
// of MCP, for the tests of the hub and of the front ends above it: each
// file adds one feature's tools (elicit.go: elicitation, in form and URL
// modes; prompts.go: prompts with completions; progress.go: progress and
// cancellation; results.go: structured results and resource links;
// apps.go: MCP Apps' tool metadata, and with -meta-tools tools whose
// _meta the test chooses). It speaks 2026-07-28, asking through
// "input_required" results; with -legacy it refuses server/discover, so
// that a client speaks a 2025 revision to it, and mcp-go sends the same
// questions as elicitation/create requests. With -http it serves over
// HTTP instead of stdio (http.go), on 127.0.0.1 at a port of the
// system's choosing, which it writes to stdout as its first line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	legacy := flag.Bool("legacy", false, "refuse server/discover: speak only the 2025 revisions")
	overHTTP := flag.Bool("http", false, "serve Streamable HTTP at /mcp and SSE at /sse on 127.0.0.1, writing the base URL to stdout")
	metaTools := flag.String("meta-tools", "", "a JSON object of tool name to _meta: a tool of each, its _meta as given")
	pageUI := flag.String("app-page-ui", "", "a JSON value: the _meta.ui its app page's resources/read gives")
	listedUI := flag.String("app-listed-ui", "", "a JSON value: the _meta.ui its app page's listing gives")
	flag.Parse()

	s := server.NewMCPServer("features", "1.0.0", append(promptOptions(), server.WithToolCapabilities(true), server.WithTitle(serverTitle()))...)
	addClientTool(s)
	addPrompts(s)
	addElicitTools(s)
	addProgressTools(s)
	addResultTools(s)
	if err := addAppTools(s, *metaTools, *pageUI, *listedUI); err != nil {
		log.Fatal(err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if *overHTTP {
		httpMode = true
		if err := serveHTTP(ctx, s, *legacy); err != nil {
			log.Fatal(err)
		}
		return
	}
	out := stdout
	var in io.Reader = os.Stdin
	if *legacy {
		in = refuseDiscover(os.Stdin, out)
	}
	// Workers enough for the tests' calls in flight at once.
	std := server.NewStdioServer(s)
	server.WithWorkerPoolSize(32)(std)
	if err := std.Listen(ctx, in, out); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

// addClientTool adds "client", which reports the revision and the
// capabilities the client declared: per request on 2026-07-28, at
// initialize before.
func addClientTool(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("client", mcp.WithDescription("Reports the client's revision and capabilities.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var caps any
			if req.Params.Meta != nil {
				caps = req.Params.Meta.AdditionalFields[mcp.MetaKeyClientCapabilities]
			}
			if session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok && caps == nil {
				caps = session.GetClientCapabilities()
			}
			return report(map[string]any{"protocol": server.RequestProtocolVersion(ctx), "capabilities": caps})
		})
}

// refuseDiscover passes the lines of r on, but answers a server/discover
// request itself with "method not found", as a 2025 server does.
func refuseDiscover(r io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Method == "server/discover" && msg.ID != nil {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", msg.ID)
				continue
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// stdout is where the server and what writes beside it (refuseDiscover,
// progress) write whole lines.
var stdout = &lockedWriter{w: os.Stdout}

// A lockedWriter lets refuseDiscover and the server write whole lines to
// one stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// serverTitle is the title the server gives itself: FEATURES_TITLE (for
// a hostile one), else "Features Test Server".
func serverTitle() string {
	if t, ok := os.LookupEnv("FEATURES_TITLE"); ok {
		return t
	}
	return "Features Test Server"
}
