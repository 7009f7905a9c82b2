// Package stdio serves a bundled MCP server over standard input and output,
// the way every MCP host (mcpgram's hub, Cline, Claude Desktop) launches it.
package stdio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mark3labs/mcp-go/server"
)

// Main is the whole of a bundled server's main function: it calls run
// with a logger that writes to stderr and a context that ends on SIGINT
// or SIGTERM (how a host stops its server), and when run fails, logs that
// name stopped, with the error, and exits with status 1.
func Main(name string, run func(ctx context.Context, logger *slog.Logger) error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, logger)
	stop()
	if err != nil {
		logger.Error(name+" stopped", "err", err)
		os.Exit(1)
	}
}

// Serve answers MCP requests on os.Stdin and os.Stdout until the host closes
// stdin or ctx is cancelled (the host's SIGTERM). Both count as a clean end.
// Stdout carries the protocol, so every log line goes to the logger, which
// must write elsewhere (stderr).
func Serve(ctx context.Context, srv *server.MCPServer, logger *slog.Logger) error {
	s := server.NewStdioServer(srv)
	// mcp-go logs through a log.Logger: make its lines records of ours, so
	// that a server's stderr has one format.
	s.SetErrorLogger(slog.NewLogLogger(logger.With("component", "mcp-go").Handler(), slog.LevelWarn))
	err := s.Listen(ctx, os.Stdin, os.Stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve stdio: %w", err)
	}
	return nil
}
