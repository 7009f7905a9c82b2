// Protocol negotiation: the hub speaks the newest MCP revision mcp-go
// knows (2026-07-28, stateless: server/discover and per-request _meta)
// with servers that answer server/discover for it, and the newest revision
// of the initialize handshake with the others.

package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// The revisions the hub negotiates.
const (
	// ProtocolLatest is asked for first, with server/discover.
	ProtocolLatest = mcp.LATEST_PROTOCOL_VERSION
	// ProtocolLegacy is asked for in initialize from a server that does
	// not speak ProtocolLatest; the server may answer with an older one.
	ProtocolLegacy = mcp.LATEST_LEGACY_PROTOCOL_VERSION
)

// discoverWait bounds the server/discover probe when nothing answers it
// (a server still starting, or one that ignores requests before
// initialize): the hub then speaks the handshake. A 2025 server answers
// at once with "method not found" (mcp-go's, the TypeScript SDK's:
// server-everything, server-filesystem). One that ignores server/discover
// but answers the ping sent after it (over stdio, where requests are read
// in order) is known to ignore it pingGrace after the ping's answer; the
// hub remembers that for the launch (see Hub.legacy), and an entry's
// "protocolVersion" skips the probe altogether.
const (
	discoverWait = 5 * time.Second
	pingGrace    = 500 * time.Millisecond
)

// clientInfo is who the hub says it is.
var clientInfo = mcp.Implementation{Name: "mcpgram", Version: "1"}

// capabilities are exactly the client features the hub implements for a
// server of transport typ: elicitation in both modes when it has someone
// to ask, except over HTTP+SSE, where mcp-go cannot answer a server's
// request; nothing else (sampling and roots are deprecated in 2026-07-28
// and left out). MCP Apps' extension only where the bot can show an app
// (Options.Apps): a server that sees it may list other tools, made for a
// host that shows them.
func (h *Hub) capabilities(typ string) mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if h.ask.Elicitor != nil && typ != TypeSSE {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	}
	if h.opts.Apps {
		caps.Extensions = map[string]any{
			mcpgram.AppsExtension: map[string]any{"mimeTypes": []string{mcpgram.AppMIMEType}},
		}
	}
	return caps
}

// negotiate decides the revision to initialize c with: the entry's own
// "protocolVersion" if it names one, the newest the server offers in
// answer to server/discover, or else (and always over the HTTP+SSE
// transport) ProtocolLegacy.
func (s *server) negotiate(ctx context.Context, c *conn, cfg config) string {
	switch {
	case cfg.protocolVersion != "":
		return cfg.protocolVersion
	case cfg.typ == TypeSSE:
		// The HTTP+SSE transport ended with the 2025 revisions.
		return ProtocolLegacy
	}
	key := cfg.launchKey()
	if s.hub.ignoresDiscover(key) {
		return ProtocolLegacy
	}
	probe := c.tr
	if cfg.typ == TypeStreamableHTTP {
		// A transport of its own: the session's depends on the answer.
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(cfg.headers), transport.WithHTTPLogger(s.transportLogger(cfg))}
		if hc := s.httpClient(cfg, c.user); hc != nil {
			opts = append(opts, transport.WithHTTPBasicClient(hc))
		}
		tr, err := transport.NewStreamableHTTP(cfg.url, opts...)
		if err != nil {
			return ProtocolLegacy
		}
		defer tr.Close()
		probe = tr
	}
	version, err := s.discover(ctx, probe, cfg.typ == TypeStdio)
	switch {
	case err == nil:
		return version
	case errors.Is(err, errIgnored):
		s.log.Info("server ignored server/discover; speaking the initialize handshake to it from now on")
		s.hub.rememberIgnoresDiscover(key)
	default:
		s.log.Debug("server/discover refused; speaking the initialize handshake", "err", cfg.scrubErr(err))
	}
	return ProtocolLegacy
}

// errIgnored: the server answered the ping but not server/discover.
var errIgnored = errors.New("server/discover ignored")

// discover probes c with server/discover and returns the newest modern
// revision both sides speak. Any answer that does not list one (an error,
// a result without supportedVersions, as some servers answer every method
// they do not know) means the server is not modern. Over stdio a ping
// follows, to tell a server that ignores server/discover from one still
// starting.
func (s *server) discover(ctx context.Context, tr transport.Interface, ping bool) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, discoverWait)
	defer cancel()
	hc, _ := tr.(transport.HTTPConnection)
	if hc != nil {
		// The Mcp-Protocol-Version header has to agree with the _meta.
		hc.SetProtocolVersion(ProtocolLatest)
	}
	type answer struct {
		resp *transport.JSONRPCResponse
		err  error
	}
	discovered, pinged := make(chan answer, 1), make(chan answer, 1)
	go func() {
		resp, err := tr.SendRequest(pctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId("mcpgram-discover"),
			Method:  string(mcp.MethodServerDiscover),
			Params:  map[string]any{"_meta": s.hub.protocolMeta(ProtocolLatest)},
			Header:  standardHeaders(ProtocolLatest, mcp.MethodServerDiscover, nil),
		})
		discovered <- answer{resp, err}
	}()
	if ping {
		go func() {
			resp, err := tr.SendRequest(pctx, transport.JSONRPCRequest{
				JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("mcpgram-ping"), Method: string(mcp.MethodPing),
			})
			pinged <- answer{resp, err}
		}()
	}
	var a answer
	select {
	case a = <-discovered:
	case p := <-pinged:
		grace := time.NewTimer(pingGrace)
		defer grace.Stop()
		select {
		case a = <-discovered:
		case <-grace.C:
			if p.err == nil {
				a.err = errIgnored
			} else {
				a = <-discovered
			}
		}
	}
	version := ""
	if a.err == nil {
		version, a.err = modernVersion(a.resp)
	}
	if hc != nil && version == "" {
		hc.SetProtocolVersion("")
	}
	return version, a.err
}

var errNotModern = errors.New("no revision from 2026-07-28 on in common")

func modernVersion(resp *transport.JSONRPCResponse) (string, error) {
	if resp.Error != nil {
		return "", resp.Error.AsError()
	}
	var res mcp.DiscoverResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return "", err
	}
	v := mcp.NegotiateMutuallySupportedVersion(res.SupportedVersions)
	if !mcp.IsModernProtocol(v) {
		return "", errNotModern
	}
	return v, nil
}

// protocolMeta is the _meta every request of a modern connection carries:
// the revision, who the client is and what it can do (modern connections
// are never HTTP+SSE).
func (h *Hub) protocolMeta(version string) map[string]any {
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         clientInfo,
		mcp.MetaKeyClientCapabilities: h.capabilities(TypeStdio),
	}
}

// standardHeaders are the Mcp-Method and Mcp-Name headers that 2026-07-28
// asks for on Streamable HTTP; other transports ignore them.
func standardHeaders(version string, method mcp.MCPMethod, params any) http.Header {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil
	}
	std := mcp.StandardHeaders(version, method, raw)
	if len(std) == 0 {
		return nil
	}
	h := make(http.Header, len(std))
	for k, v := range std {
		h.Set(k, v)
	}
	return h
}

// ignoresDiscover reports whether a server launched as key was seen to
// ignore server/discover.
func (h *Hub) ignoresDiscover(key string) bool {
	h.legacyMu.Lock()
	defer h.legacyMu.Unlock()
	return h.legacy[key]
}

func (h *Hub) rememberIgnoresDiscover(key string) {
	h.legacyMu.Lock()
	defer h.legacyMu.Unlock()
	if h.legacy == nil {
		h.legacy = map[string]bool{}
	}
	h.legacy[key] = true
}

// validProtocolVersion checks an entry's "protocolVersion".
func validProtocolVersion(v string) bool {
	return slices.Contains(mcp.ValidProtocolVersions, v)
}

// requestID is the id of the hub's n-th request on a connection.
func requestID(n int64) string { return "mcpgram-" + strconv.FormatInt(n, 10) }
