package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// httpMode is set when the server serves over HTTP, where notifications
// go through the server rather than to stdout.
var httpMode bool

// serveHTTP serves s until ctx ends: Streamable HTTP at /mcp and SSE at
// /sse (with its messages at /message), on 127.0.0.1 at a port the system
// picks. It writes the base URL to stdout first, so that whoever started
// it knows where to connect. With legacy, /mcp refuses server/discover as
// a 2025 server does.
func serveHTTP(ctx context.Context, s *server.MCPServer, legacy bool) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	base := "http://" + l.Addr().String()
	var streamable http.Handler = server.NewStreamableHTTPServer(s)
	if legacy {
		streamable = refuseDiscoverHTTP(streamable)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", streamable)
	mux.Handle("/", server.NewSSEServer(s, server.WithBaseURL(base)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if _, err := fmt.Fprintln(stdout, base); err != nil {
		return fmt.Errorf("write the address: %w", err)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// refuseDiscoverHTTP answers a POSTed server/discover request itself with
// "method not found", passing everything else to next.
func refuseDiscoverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "server/discover" && msg.ID != nil {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
