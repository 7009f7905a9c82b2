package llmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
)

// functionName is what OpenAI-compatible endpoints accept as a function's
// name.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkWire checks req as a strict endpoint does before answering: the
// tools offered are well formed and named once each; every assistant
// message's tool calls have unique ids, valid names and string
// arguments, and are each answered by one "tool" message, those coming
// right after it; no "tool" message answers anything else.
func checkWire(req Request) error {
	seen := map[string]bool{}
	for i, t := range req.Tools {
		name := t.Function.Name
		switch {
		case t.Type != "function":
			return fmt.Errorf("tools[%d]: type %q, want function", i, t.Type)
		case !functionName.MatchString(name):
			return fmt.Errorf("tools[%d]: invalid function name %q", i, name)
		case seen[name]:
			return fmt.Errorf("tools[%d]: function %q given twice", i, name)
		}
		seen[name] = true
		var params struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(t.Function.Parameters, &params); err != nil || params.Type != "object" {
			return fmt.Errorf("tools[%d] (%s): parameters must be a JSON Schema of type object: %s", i, name, t.Function.Parameters)
		}
	}
	var open []string // ids of the last assistant message not yet answered
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "user", "assistant", "tool":
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		if m.Role == "tool" {
			j := slices.Index(open, m.ToolCallID)
			if j < 0 {
				return fmt.Errorf("messages[%d]: a tool message must answer a tool_call_id of the assistant message just before it (got %q)", i, m.ToolCallID)
			}
			open = slices.Delete(open, j, j+1)
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with tool_calls must be followed by tool messages answering each tool_call_id; %v left unanswered", i, open)
		}
		if len(m.ToolCalls) > 0 && m.Role != "assistant" {
			return fmt.Errorf("messages[%d]: tool_calls on a %s message", i, m.Role)
		}
		if m.ToolCallID != "" {
			return fmt.Errorf("messages[%d]: tool_call_id on a %s message", i, m.Role)
		}
		ids := map[string]bool{}
		for k, c := range m.ToolCalls {
			var args string
			switch {
			case c.ID == "" || ids[c.ID]:
				return fmt.Errorf("messages[%d].tool_calls[%d]: empty or repeated id %q", i, k, c.ID)
			case c.Type != "function":
				return fmt.Errorf("messages[%d].tool_calls[%d]: type %q, want function", i, k, c.Type)
			case !functionName.MatchString(c.Function.Name):
				return fmt.Errorf("messages[%d].tool_calls[%d]: invalid function name %q", i, k, c.Function.Name)
			case json.Unmarshal(c.Function.Arguments, &args) != nil:
				return fmt.Errorf("messages[%d].tool_calls[%d]: arguments must be a string", i, k)
			}
			ids[c.ID] = true
			open = append(open, c.ID)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the last assistant message's tool_calls %v are unanswered", open)
	}
	return nil
}

// MsgToolsRejected is what RejectTools answers, in the words endpoints
// without native tools use.
const MsgToolsRejected = "tools is not supported by this model"

// RejectTools returns a Handler that answers every request offering tools
// with 400 and MsgToolsRejected, as an endpoint without native tool
// calling does, and hands the others to h, numbered among themselves.
// Rejected counts the requests it refused.
func RejectTools(h Handler, rejected *int) Handler {
	n := 0
	return func(c Call) Reply {
		if len(c.Request.Tools) > 0 {
			if rejected != nil {
				*rejected++
			}
			return Reply{Status: http.StatusBadRequest, Error: MsgToolsRejected}
		}
		n++
		c.N = n
		return h(c)
	}
}
