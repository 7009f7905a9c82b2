package llmfake

import (
	"encoding/json"

	"github.com/mcpgram/mcpgram/toolcall"
)

// AsNative returns r as a model with native tool calling writes it: the
// XML tool blocks of its text become tool calls (a server's tool named
// server__tool, the core actions by their names), the visible text stays
// the content, and a streamed reply comes in pieces of 5 bytes. Replies
// without blocks, and errors, are returned as they are.
func AsNative(r Reply) Reply {
	if r.Status != 0 && r.Status != 200 {
		return r
	}
	p := toolcall.Parse(r.text())
	if len(p.Blocks) == 0 {
		return r
	}
	r.Content, r.Chunks, r.ToolCalls = p.Text, nil, nil
	for _, b := range p.Blocks {
		var c ToolCall
		switch b.Name {
		case toolcall.UseMCPTool:
			c = ToolCall{Name: b.Params["server_name"] + "__" + b.Params["tool_name"], Arguments: b.Params["arguments"]}
		case toolcall.AccessMCPResource:
			c = Fn(b.Name, map[string]string{"server_name": b.Params["server_name"], "uri": b.Params["uri"]})
		case toolcall.AskFollowupQuestion:
			args := map[string]any{"question": b.Params["question"]}
			var opts []string
			if json.Unmarshal([]byte(b.Params["options"]), &opts) == nil {
				args["options"] = opts
			}
			c = Fn(b.Name, args)
		case toolcall.AttemptCompletion:
			c = Fn(b.Name, map[string]string{"result": b.Params["result"]})
		case toolcall.SearchTools:
			args := map[string]string{"query": b.Params["query"]}
			if s := b.Params["server_name"]; s != "" {
				args["server_name"] = s
			}
			c = Fn(b.Name, args)
		default:
			continue
		}
		r.ToolCalls = append(r.ToolCalls, c)
	}
	return r.Split(5)
}

// Native returns a Handler that answers as h does, but as a model with
// native tool calling (see AsNative) whenever the request offers tools.
func Native(h Handler) Handler {
	return func(c Call) Reply {
		r := h(c)
		if len(c.Request.Tools) == 0 {
			return r
		}
		return AsNative(r)
	}
}
