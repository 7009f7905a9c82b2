// Package stdio serves a bundled MCP server over standard input and output,
// the way every MCP host (mcpgram's hub, Cline, Claude Desktop) launches it.
package stdio

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/mark3labs/mcp-go/server"
)

// Serve answers MCP requests on os.Stdin and os.Stdout until the host closes
// stdin or ctx is cancelled (the host's SIGTERM). Both count as a clean end.
// Stdout carries the protocol, so every log line goes to the logger, which
// must write elsewhere (stderr).
func Serve(ctx context.Context, srv *server.MCPServer, logger *slog.Logger) error {
	s := server.NewStdioServer(srv)
	s.SetErrorLogger(log.New(slogWriter{logger}, "", 0))
	err := s.Listen(ctx, os.Stdin, os.Stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve stdio: %w", err)
	}
	return nil
}

// slogWriter turns mcp-go's log.Logger output into structured records, so a
// server's stderr has one format.
type slogWriter struct{ logger *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	w.logger.Warn(msg, "component", "mcp-go")
	return len(p), nil
}
