package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// weatherSchema is the output schema of "weather".
var weatherSchema = json.RawMessage(`{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"]}`)

// A 1x1 PNG, as base64.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// addResultTools adds the tools whose results are structured or link to
// resources, and the resources they link to.
func addResultTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("weather", mcp.WithToolTitle("Today's weather"),
		mcp.WithDescription("Reports the weather as structured content, its text the same JSON; with broken, content that breaks its own output schema; with missing, none at all."),
		mcp.WithBoolean("broken"), mcp.WithBoolean("missing"), mcp.WithRawOutputSchema(weatherSchema)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			switch {
			case req.GetBool("missing", false):
				return mcp.NewToolResultText("sunny, I think"), nil
			case req.GetBool("broken", false):
				return mcp.NewToolResultStructured(map[string]any{"temperature": "warm"}, `{"temperature": "warm"}`), nil
			}
			v := map[string]any{"temperature": 21.5, "conditions": "sunny"}
			text, _ := json.MarshalIndent(v, "", "  ")
			return mcp.NewToolResultStructured(v, string(text)), nil
		})
	s.AddTool(mcp.NewTool("forecast", mcp.WithDescription("Says tomorrow's weather in words, with the figures as structured content.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"high": 24, "low": 12}, "Tomorrow: mild, 12 to 24 degrees."), nil
		})
	s.AddTool(mcp.NewTool("report", mcp.WithDescription("Writes a report and links to it: a chart (image) and notes (text).")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("The report is ready."),
				mcp.NewResourceLink("features://report/chart.png", "chart.png", "The chart", "image/png"),
				mcp.NewResourceLink("features://report/notes.txt", "notes.txt", "The notes", "text/plain"),
			}}, nil
		})
	s.AddResource(mcp.NewResource("features://report/chart.png", "chart.png", mcp.WithMIMEType("image/png")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: "image/png", Blob: pixel}}, nil
		})
	s.AddResource(mcp.NewResource("features://report/notes.txt", "notes.txt", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: fmt.Sprintf("Notes of the report (%s).", req.Params.URI)}}, nil
		})
}
