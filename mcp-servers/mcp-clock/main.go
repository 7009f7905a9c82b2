// Command mcp-clock is an MCP server, spoken over stdio, that tells the
// time in any IANA time zone and converts times between zones, so a model
// need not guess the date or do offset arithmetic.
//
// Tools:
//
//	current_time  timezone (default UTC): RFC 3339, weekday and a readable form
//	convert_time  time, from_timezone (default UTC), to_timezone: the time in
//	              the target zone; accepts RFC 3339, "2006-01-02 15:04" and
//	              "15:04" (today in the source zone)
//
// An unknown zone is a tool error that shows valid examples. The zone
// database is compiled in, so zones work even where the system has none
// (minimal Docker images). It reads no environment variables. Logs go to
// stderr; stdout carries the protocol.
package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/stdio"
	"github.com/mcpgram/mcpgram/mcp-servers/mcp-clock/internal/clock"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	stdio.Main("mcp-clock", func(ctx context.Context, logger *slog.Logger) error {
		return stdio.Serve(ctx, clock.NewServer(version, time.Now), logger)
	})
}
