// Command mcp-calculator is an MCP server, spoken over stdio, with one tool,
// "calculate", that evaluates arithmetic expressions exactly, so a model
// need not do sums in its head.
//
// Expressions may contain numbers, + - * / % ^ (or **), parentheses, the
// constants pi and e, and a fixed set of math functions (sqrt, abs, round,
// min, max, pow, ln, log, sin, ...). Nothing else is accepted: no variables,
// strings or calls into code. "/" is true division, so "25 * 48 + 120 / 4"
// gives 1230. Division by zero, overflow and malformed input are tool errors
// that say what is wrong and at which position.
//
// It reads no environment variables. Logs go to stderr; stdout carries the
// protocol.
package main

import (
	"context"
	"log/slog"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/stdio"
	"github.com/mcpgram/mcpgram/mcp-servers/mcp-calculator/internal/calc"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	stdio.Main("mcp-calculator", func(ctx context.Context, logger *slog.Logger) error {
		return stdio.Serve(ctx, calc.NewServer(version), logger)
	})
}
