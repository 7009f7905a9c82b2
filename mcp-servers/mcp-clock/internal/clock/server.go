package clock

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewServer returns the MCP server with the tools current_time and
// convert_time; now is the clock it reads (time.Now outside tests).
func NewServer(version string, now func() time.Time) *server.MCPServer {
	srv := server.NewMCPServer("mcp-clock", version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
	)
	srv.AddTool(CurrentTimeTool(), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return result(CurrentTime(now(), req.GetString("timezone", "UTC")))
	})
	srv.AddTool(ConvertTimeTool(), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input, err := req.RequireString("time")
		if err != nil {
			return mcp.NewToolResultError(`The time argument is required, e.g. "2026-03-14 15:30" or "15:30".`), nil
		}
		to, err := req.RequireString("to_timezone")
		if err != nil {
			return mcp.NewToolResultError(`The to_timezone argument is required, e.g. "Asia/Tokyo".`), nil
		}
		return result(Convert(now(), input, req.GetString("from_timezone", "UTC"), to))
	})
	return srv
}

// CurrentTimeTool returns the definition of the "current_time" tool.
func CurrentTimeTool() mcp.Tool {
	return mcp.NewTool("current_time",
		mcp.WithDescription("Get the current date and time in a time zone: RFC 3339, the weekday and a readable form."),
		mcp.WithTitleAnnotation("Current time"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithString("timezone", mcp.DefaultString("UTC"),
			mcp.Description(`IANA time zone name, e.g. "Europe/Berlin" or "America/New_York". Default UTC.`)),
	)
}

// ConvertTimeTool returns the definition of the "convert_time" tool.
func ConvertTimeTool() mcp.Tool {
	return mcp.NewTool("convert_time",
		mcp.WithDescription("Convert a time from one time zone to another, with the weekday and the offset difference. "+
			"A time of day alone means today in the source zone."),
		mcp.WithTitleAnnotation("Convert time"),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
		mcp.WithString("time", mcp.Required(),
			mcp.Description(`The time: "2026-03-14 15:30", "15:30", "3:30 PM" or RFC 3339 "2026-03-14T15:30:00+01:00" (whose offset then replaces from_timezone).`)),
		mcp.WithString("from_timezone", mcp.DefaultString("UTC"),
			mcp.Description(`IANA time zone the time is in, e.g. "America/New_York". Default UTC.`)),
		mcp.WithString("to_timezone", mcp.Required(),
			mcp.Description(`IANA time zone to convert to, e.g. "Asia/Tokyo".`)),
	)
}

func result(text string, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			// A sentence for the model: capitalised, with a full stop.
			return mcp.NewToolResultError(strings.ToUpper(ce.Reason[:1]) + ce.Reason[1:] + "."), nil
		}
		return nil, err
	}
	return mcp.NewToolResultText(text), nil
}
