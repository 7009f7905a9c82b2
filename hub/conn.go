package hub

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A conn is one live connection: an MCP session with a child process
// over stdio, or with a remote server over HTTP. What the process of a
// stdio server holds is its child.
type conn struct {
	child
	// user is whose account the connection acts as: "" for the
	// operator's (the one connection of a server).
	user    string
	client  *client.Client
	tr      transport.Interface
	started time.Time
	nextID  atomic.Int64

	// lost is closed when the process exits, its pipe breaks, or the remote
	// connection drops.
	lost     chan struct{}
	lostOnce sync.Once
	// closed is closed once the transport has been shut down.
	closed    chan struct{}
	closeOnce sync.Once
	// refresh asks for the catalog to be read again.
	refresh chan struct{}

	requests inFlight // the hub's requests awaiting an answer
	calls    calls    // the calls among them, for what their servers ask
	schemas  schemas  // what a 2025 server over stdio asks, as written

	// want is the revision to ask for in initialize; version is the one
	// negotiated; modern, whether it is 2026-07-28 or later, whose requests
	// carry their own _meta.
	want    string
	version string
	modern  bool
	hubMeta map[string]any // the _meta keys of a modern connection
	// tools are the server's tool definitions, for the Mcp-Param headers
	// of a modern connection over HTTP.
	toolsMu sync.Mutex
	tools   map[string]mcp.Tool
	// stopListen ends the subscriptions/listen stream of a modern connection.
	stopListen func()

	reasonMu sync.Mutex
	reason   error // why the hub stopped the child, if it did

	// stopErr is what shutdown returned, for the run loop to report.
	stopErr error
}

// newConn is a connection, not made yet, that acts as user ("" for the
// operator).
func newConn(user string) *conn {
	return &conn{
		child:   newChild(),
		user:    user,
		lost:    make(chan struct{}),
		closed:  make(chan struct{}),
		refresh: make(chan struct{}, 1),
	}
}

func (c *conn) setReason(err error) {
	c.reasonMu.Lock()
	defer c.reasonMu.Unlock()
	if c.reason == nil {
		c.reason = err
	}
}

func (c *conn) stopReason() error {
	c.reasonMu.Lock()
	defer c.reasonMu.Unlock()
	return c.reason
}

func (c *conn) markLost() { c.lostOnce.Do(func() { close(c.lost) }) }

// close shuts the transport down once: for a child, that closes its
// stdin. The transport goes first, so that ending the subscriptions/listen
// stream of a modern connection sends the server nothing more.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		_ = c.client.Close()
		if c.stopListen != nil {
			c.stopListen()
		}
		close(c.closed)
	})
}

// listen has the hub follow what the server of c notifies: list changes
// and progress.
func (s *server) listen(c *conn) {
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		// This runs in mcp-go's read loop: a request from here would wait
		// for a response that loop can no longer read.
		switch n.Method {
		case mcp.MethodNotificationToolsListChanged, mcp.MethodNotificationResourcesListChanged, mcp.MethodNotificationPromptsListChanged:
			select {
			case c.refresh <- struct{}{}:
			default:
			}
		case string(mcp.MethodNotificationProgress):
			c.progressed(n)
		}
	})
}

// shutdown stops a connection for good: close stdin, give the server a
// moment, then SIGTERM and at last SIGKILL its whole process group. Closed
// stdin and SIGTERM are how the MCP specification ends a stdio server; a
// server, or a process it left behind, that ignored both and had to be
// killed is an error, which may mean work it had not saved.
func (s *server) shutdown(c *conn) error {
	c.close()
	if c.cmd == nil {
		return nil
	}
	c.stopErr = c.child.stop(s.hub.opts.StopGrace, s.hub.opts.KillGrace)
	return c.stopErr
}

// jsonRPC is the request to send on c: on a modern connection its _meta
// also carries the revision, the client and its capabilities, and over
// HTTP it has the Mcp-* headers.
func (c *conn) jsonRPC(id mcp.RequestId, method string, params map[string]any, cl *call) transport.JSONRPCRequest {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params}
	if !c.modern {
		return req
	}
	p := maps.Clone(params)
	m := map[string]any{}
	if old, ok := params["_meta"].(map[string]any); ok {
		maps.Copy(m, old)
	}
	maps.Copy(m, c.hubMeta)
	if cl.tasks {
		m[mcp.MetaKeyClientCapabilities] = withTasksExtension(m[mcp.MetaKeyClientCapabilities])
	}
	p["_meta"] = m
	req.Params = p
	req.Header = standardHeaders(c.version, mcp.MCPMethod(method), p)
	if id, ok := params["taskId"].(string); ok && strings.HasPrefix(method, "tasks/") {
		// The Tasks extension routes a task's requests by its id.
		if v, ok := mcp.EncodeHeaderValue(id); ok {
			if req.Header == nil {
				req.Header = http.Header{}
			}
			req.Header.Set(mcp.HeaderName, v)
		}
	}
	if method == string(mcp.MethodToolsCall) {
		c.toolsMu.Lock()
		t, ok := c.tools[cl.tool]
		c.toolsMu.Unlock()
		if raw, err := json.Marshal(p); ok && err == nil {
			for k, v := range mcp.GenerateParamHeaders(&t, raw) {
				if req.Header == nil {
					req.Header = http.Header{}
				}
				req.Header.Set(k, v)
			}
		}
	}
	return req
}

// cancelRequest tells the server to stop working on a request we gave up
// on, so that it stays usable for the next one: with
// notifications/cancelled, except on a 2026-07-28 connection over HTTP,
// where ending the request's stream is the cancellation. Over the SSE
// transport the result comes on a stream of its own, which the request's
// end leaves open; a 2025 server over Streamable HTTP gets the
// notification too, as that revision asks.
func (c *conn) cancelRequest(id mcp.RequestId, reason error) {
	if c.cmd == nil && c.modern {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": id,
				"reason":    reason.Error(),
			}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.tr.SendNotification(ctx, n)
	}()
}
