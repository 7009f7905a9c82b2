package apps

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// encodeCall returns a call's arguments and result as the app reads them
// (its tool-input's arguments and its tool-result, an MCP
// CallToolResult), within the store's bounds.
func encodeCall(arguments string, r *mcpgram.Result) (input, result []byte, err error) {
	if arguments == "" {
		arguments = "{}"
	}
	if !json.Valid([]byte(arguments)) {
		return nil, nil, fmt.Errorf("arguments are not JSON")
	}
	if len(arguments) > store.MaxAppInput {
		return nil, nil, fmt.Errorf("arguments of %d bytes: %w", len(arguments), store.ErrTooLarge)
	}
	result, err = json.Marshal(toolResult(r))
	if err != nil {
		return nil, nil, fmt.Errorf("encode result: %w", err)
	}
	if len(result) > store.MaxAppResult {
		return nil, nil, fmt.Errorf("result of %d bytes: %w", len(result), store.ErrTooLarge)
	}
	return []byte(arguments), result, nil
}

// toolResult is r as MCP writes a CallToolResult.
func toolResult(r *mcpgram.Result) map[string]any {
	content := []map[string]any{}
	for _, c := range r.Content {
		content = append(content, contentJSON(c))
	}
	out := map[string]any{"content": content}
	if r.IsError {
		out["isError"] = true
	}
	if len(r.Structured) > 0 {
		out["structuredContent"] = json.RawMessage(r.Structured)
	}
	return out
}

// contentJSON is one part of a result as MCP writes it.
func contentJSON(c mcpgram.Content) map[string]any {
	switch c.Type {
	case mcpgram.ContentImage, mcpgram.ContentAudio:
		return map[string]any{"type": c.Type, "data": base64.StdEncoding.EncodeToString(c.Data), "mimeType": c.MIMEType}
	case mcpgram.ContentResourceLink:
		return map[string]any{"type": c.Type, "uri": c.URI, "name": c.Name, "mimeType": c.MIMEType}
	case mcpgram.ContentResource:
		res := map[string]any{"uri": c.URI, "mimeType": c.MIMEType}
		if c.Data != nil {
			res["blob"] = base64.StdEncoding.EncodeToString(c.Data)
		} else {
			res["text"] = c.Text
		}
		return map[string]any{"type": c.Type, "resource": res}
	}
	return map[string]any{"type": mcpgram.ContentText, "text": c.Text}
}
