package hub

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// dial opens the session of a remote server, negotiating its revision
// first: a 2025 server over Streamable HTTP sends what it asks, and its
// list changes, on the stream of a GET that the session keeps open, which
// 2026-07-28 removed.
func (s *server) dial(ctx context.Context, c *conn, cfg config) error {
	c.want = s.negotiate(ctx, c, cfg)
	var err error
	switch cfg.typ {
	case TypeStreamableHTTP:
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(cfg.headers), transport.WithHTTPLogger(s.transportLogger(cfg))}
		if hc := s.httpClient(cfg, c.user); hc != nil {
			opts = append(opts, transport.WithHTTPBasicClient(hc))
		}
		if !mcp.IsModernProtocol(c.want) {
			//lint:ignore SA1019 deprecated for 2026-07-28, which this connection does not speak: a 2025 server sends its requests and list changes on this stream.
			opts = append(opts, transport.WithContinuousListening())
		}
		var tr *transport.StreamableHTTP
		if tr, err = transport.NewStreamableHTTP(cfg.url, opts...); err == nil {
			c.client = client.NewClient(tr, s.clientOptions(cfg.typ)...)
		}
	case TypeSSE:
		var tr *transport.SSE
		opts := []transport.ClientOption{transport.WithHeaders(cfg.headers), transport.WithSSELogger(s.transportLogger(cfg))}
		if hc := s.httpClient(cfg, c.user); hc != nil {
			opts = append(opts, transport.WithHTTPClient(hc))
		}
		if tr, err = transport.NewSSE(cfg.url, opts...); err == nil {
			c.client = client.NewClient(tr, s.clientOptions(cfg.typ)...)
		}
	}
	if err != nil {
		return cfg.scrubErr(fmt.Errorf("connect %s: %w", cfg.url, err))
	}
	c.tr = c.client.GetTransport()
	c.client.OnConnectionLost(func(error) { c.markLost() })
	// The SSE stream lives as long as this context, so it must outlast
	// start-up; it ends when the connection is shut down.
	life, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.closed
		cancel()
	}()
	if err := c.client.Start(life); err != nil {
		c.close()
		return cfg.scrubErr(fmt.Errorf("connect %s: %w", cfg.url, err))
	}
	s.answerRequests(c)
	return nil
}

// httpClient is the HTTP client of a remote server's requests: one that
// signs in as user ("" for the operator) where the hub has an Authorizer,
// else nil (mcp-go's own).
func (s *server) httpClient(cfg config, user string) *http.Client {
	if s.hub.opts.Auth == nil {
		return nil
	}
	return &http.Client{Transport: s.hub.opts.Auth.Transport(s.name, user, cfg.url, cfg.oauth, http.DefaultTransport)}
}

// clientOptions are those of an mcp-go client of a server of transport
// typ: the capabilities the hub implements there.
func (s *server) clientOptions(typ string) []client.ClientOption {
	return []client.ClientOption{client.WithClientCapabilities(s.hub.capabilities(typ))}
}

// answerRequests has the hub, not mcp-go's client, answer what the server
// of c requests, once the client has started (its Start sets its own
// handler).
func (s *server) answerRequests(c *conn) {
	if b, ok := c.tr.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(s.serverRequests(c))
	}
}

// initialize negotiates the revision and initializes c with it: with
// server/discover for 2026-07-28, with the initialize handshake before.
// A modern connection then listens for the list changes the hub follows.
func (s *server) initialize(ctx context.Context, c *conn, cfg config) error {
	if c.want == "" {
		c.want = s.negotiate(ctx, c, cfg)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = c.want
	req.Params.ClientInfo = clientInfo
	req.Params.Capabilities = s.hub.capabilities(cfg.typ)
	if !mcp.IsModernProtocol(c.want) {
		// The 2025-11-25 form of tasks: the hub makes task-augmented
		// tools/call (see StartTool) and receives no task-augmented
		// request itself, so it declares the capability with nothing in it.
		req.Params.Capabilities.Tasks = &mcp.TasksCapability{}
	}
	res, err := c.client.Initialize(ctx, req)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	about := describe(res.ServerInfo, res.Instructions)
	var notes []string
	title := cutTitle(res.ServerInfo.Title, s.name, &notes)
	if title == s.name {
		title = ""
	}
	for _, n := range notes {
		s.log.Warn("screened the server's catalog", "note", n)
	}
	s.mu.Lock()
	s.cat.about, s.cat.title = about, title
	s.mu.Unlock()
	c.version = c.client.ProtocolVersion()
	c.modern = mcp.IsModernProtocol(c.version)
	if c.modern {
		c.hubMeta = s.hub.protocolMeta(c.version)
		filter := mcp.SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true, PromptsListChanged: true}
		stop, err := c.client.ListenAsync(context.Background(), filter, func(err error) {
			s.log.Debug("subscriptions/listen ended", "err", err)
		})
		if err == nil {
			c.stopListen = stop
		}
	}
	s.log.Debug("server initialized", "protocol", c.version)
	return nil
}

// maxAbout bounds a server's description: it goes into the prompt, one
// line per server, and a server must not fill it.
const maxAbout = 200

// describe is what a server says it is for, in one line of at most
// maxAbout bytes: its description, else its title, else the first
// sentence of its instructions.
func describe(info mcp.Implementation, instructions string) string {
	s := info.Description
	if strings.TrimSpace(s) == "" {
		s = info.Title
	}
	if strings.TrimSpace(s) == "" {
		s = firstSentence(instructions)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxAbout {
		cut := maxAbout
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// firstSentence is s up to the end of its first sentence or line.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			return s[:i+1]
		}
	}
	return s
}
