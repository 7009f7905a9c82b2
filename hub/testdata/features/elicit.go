package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// bookingSchema asks for one field of each kind a form may hold, in the
// order a person would: raw JSON, as a map would lose it.
var bookingSchema = json.RawMessage(`{"type": "object", "properties": {
	"date": {"type": "string", "title": "Date", "format": "date", "description": "The day of the booking"},
	"party": {"type": "integer", "title": "Party size", "minimum": 1, "maximum": 12, "default": 2},
	"seating": {"type": "string", "title": "Seating", "oneOf": [{"const": "indoor", "title": "Indoors"}, {"const": "outdoor", "title": "On the terrace"}]},
	"vegetarian": {"type": "boolean", "title": "Vegetarian menu", "default": false},
	"extras": {"type": "array", "title": "Extras", "items": {"type": "string", "enum": ["cake", "flowers", "candles"]}},
	"name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 40},
	"email": {"type": "string", "title": "Email", "format": "email"}
}, "required": ["date", "party", "seating"]}`)

// addElicitTools adds the tools that ask the user something mid-call. Each
// returns, as JSON text, exactly what the server got: the action and the
// content.
func addElicitTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("book", mcp.WithDescription("Books a table, asking the user the details in a form.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return askOnce(req, mcp.ElicitationParams{Message: "Book a table at Chez Test: a few details, please.", RequestedSchema: bookingSchema})
		})
	s.AddTool(mcp.NewTool("ask", mcp.WithDescription("Asks the user the form of schema (default: one text field), with message repeated repeat times; with fields > 0, a form of that many text fields."),
		mcp.WithString("message"), mcp.WithNumber("repeat"), mcp.WithNumber("fields"), mcp.WithObject("schema")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := req.GetArguments()
			msg := strings.Repeat(req.GetString("message", "Your answer?"), max(1, req.GetInt("repeat", 1)))
			schema, ok := args["schema"].(map[string]any)
			if !ok {
				schema = map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}
			}
			if n := req.GetInt("fields", 0); n > 0 {
				props := map[string]any{}
				for i := range n {
					props["f"+strconv.Itoa(i+1)] = map[string]any{"type": "string"}
				}
				schema = map[string]any{"type": "object", "properties": props}
			}
			return askOnce(req, mcp.ElicitationParams{Message: msg, RequestedSchema: schema})
		})
	s.AddTool(mcp.NewTool("secret", mcp.WithDescription("Asks the user a password, and says only how long it was.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := server.ElicitationResponse(req.Params.InputResponses, "q")
			if res == nil {
				return server.NewInputRequestBuilder("").Elicit("q", mcp.ElicitationParams{Message: "Your password, please.",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"password":{"type":"string","minLength":4}},"required":["password"]}`)}).ToolResult(), nil
			}
			content, _ := res.Content.(map[string]any)
			pw, _ := content["password"].(string)
			return mcp.NewToolResultText(fmt.Sprintf("%s: a password of %d characters", res.Action, len(pw))), nil
		})
	s.AddTool(mcp.NewTool("visit", mcp.WithDescription("Asks the user to visit url (URL mode)."),
		mcp.WithString("url", mcp.Required()), mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return askOnce(req, mcp.ElicitationParams{
				Mode: mcp.ElicitationModeURL, ElicitationID: "visit-1",
				URL: req.GetString("url", ""), Message: req.GetString("message", "Please sign in to continue."),
			})
		})
	s.AddTool(mcp.NewTool("loop", mcp.WithDescription("Asks the user a one-field form n times in one call, whatever the answers."),
		mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return loop(ctx, s, req)
		})
}

// askOnce asks p and reports the answer: the first time it answers
// input_required (which mcp-go turns into elicitation/create for a 2025
// client), the second it has the answer.
func askOnce(req mcp.CallToolRequest, p mcp.ElicitationParams) (*mcp.CallToolResult, error) {
	if res := server.ElicitationResponse(req.Params.InputResponses, "q"); res != nil {
		return report(map[string]any{"action": res.Action, "content": res.Content})
	}
	return server.NewInputRequestBuilder("").Elicit("q", p).ToolResult(), nil
}

var loopParams = mcp.ElicitationParams{Message: "Again?", RequestedSchema: map[string]any{
	"type": "object", "properties": map[string]any{"again": map[string]any{"type": "boolean", "default": true}},
}}

// loop asks n times. To a 2025 client it sends elicitation/create itself,
// n times, so that the client's own limit is what stops it; to a
// 2026-07-28 client it answers input_required n times, counting in the
// request state.
func loop(ctx context.Context, s *server.MCPServer, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n := req.GetInt("n", 1)
	if !mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		var actions []string
		for range n {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: loopParams})
			if err != nil {
				return nil, err
			}
			actions = append(actions, string(res.Action))
		}
		return report(map[string]any{"asked": len(actions), "actions": actions})
	}
	asked, _ := strconv.Atoi(req.Params.RequestState)
	var actions []string
	if asked > 0 {
		if res := server.ElicitationResponse(req.Params.InputResponses, "q"); res != nil {
			actions = append(actions, string(res.Action))
		}
	}
	if asked >= n {
		return report(map[string]any{"asked": asked, "actions": actions})
	}
	return server.NewInputRequestBuilder(strconv.Itoa(asked+1)).Elicit("q", loopParams).ToolResult(), nil
}

func report(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return mcp.NewToolResultText(string(b)), nil
}
