package calc

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewServer returns the MCP server with the one tool, "calculate".
func NewServer(version string) *server.MCPServer {
	srv := server.NewMCPServer("mcp-calculator", version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
	)
	srv.AddTool(Tool(), handle)
	return srv
}

// Tool returns the definition of the "calculate" tool.
func Tool() mcp.Tool {
	return mcp.NewTool("calculate",
		mcp.WithDescription("Evaluate an arithmetic expression exactly instead of computing it in your head. "+
			"Supports numbers, + - * / (true division) % (remainder) ^ or ** (power), parentheses, "+
			"the constants pi and e, and the functions abs, sqrt, cbrt, round(x[, digits]), floor, ceil, trunc, "+
			"min, max, pow, exp, ln, log(x[, base]), log10, log2, sin, cos, tan, asin, acos, atan, atan2, hypot (angles in radians). "+
			"Example: 25 * 48 + 120 / 4"),
		mcp.WithTitleAnnotation("Calculator"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithString("expression", mcp.Required(), mcp.MaxLength(MaxLen),
			mcp.Description("The expression, e.g. (3 + 4) * 2 ^ 3 or sqrt(2) / 2")),
	)
}

func handle(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	expression, err := req.RequireString("expression")
	if err != nil {
		return mcp.NewToolResultError("The expression argument is required, as a string, e.g. \"25 * 48 + 120 / 4\"."), nil
	}
	v, err := Eval(expression)
	if err != nil {
		return mcp.NewToolResultErrorf("Cannot evaluate %q: %v.", strings.TrimSpace(expression), err), nil
	}
	return mcp.NewToolResultText(Format(v)), nil
}
