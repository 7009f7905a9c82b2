// Native tool calling: the OpenAI "tools" a request offers, the
// "tool_calls" a reply makes, and how a streamed reply's tool-call deltas
// are put back together.

package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// RoleTool is the role of a message carrying one tool call's result; its
// ToolCallID names the call.
const RoleTool = "tool"

// A Tool is a function the model may call natively. Name must match
// ^[a-zA-Z0-9_-]{1,64}$; Parameters is a JSON Schema of type object.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// A ToolCall is one function call of a model reply, or of an assistant
// message sent back as history. Arguments is the JSON text as the model
// wrote it, which need not be valid.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolsRejected reports whether err is an endpoint refusing native tools:
// a 4xx other than 401, 403 and 429 whose message mentions tools or
// functions ("tools is not supported", "unrecognized field: functions",
// "this model does not support tools"). Only a caller that does not yet
// know whether the endpoint takes tools should read it so: once a call
// with tools succeeded, such an error is about the request itself.
func ToolsRejected(err error) bool {
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindBadRequest {
		return false
	}
	if e.StatusCode != 0 && (e.StatusCode < 400 || e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests) {
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "tool") || strings.Contains(m, "function")
}

func openaiTools(tools []Tool) []openai.Tool {
	out := make([]openai.Tool, len(tools))
	for i, t := range tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}}
	}
	return out
}

func openaiToolCalls(calls []ToolCall) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
	}
	return out
}

func toolCalls(calls []openai.ToolCall) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		out[i] = ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
	}
	return out
}

// maxStreamedCalls bounds the tool calls one streamed reply may hold, so
// that a hostile endpoint sending huge indexes cannot make us allocate.
const maxStreamedCalls = 1024

// A callAssembler puts a streamed reply's tool calls together. Deltas are
// keyed by index: the first of a call carries its id and name, the rest
// pieces of its arguments. An endpoint that sends no index gets one by
// its ids: a delta with a new id starts a call, one without continues the
// last.
type callAssembler struct {
	calls []ToolCall
	index []int // index of each call as the endpoint numbered it
	// args are pointers: a Builder must not move once written to.
	args []*strings.Builder
}

func (a *callAssembler) add(d openai.ToolCall) {
	i := -1
	switch {
	case d.Index != nil:
		i = slices.Index(a.index, *d.Index)
		if i < 0 && len(a.calls) < maxStreamedCalls {
			i = a.start(*d.Index)
		}
	case d.ID != "" && (len(a.calls) == 0 || a.calls[len(a.calls)-1].ID != d.ID):
		if len(a.calls) < maxStreamedCalls {
			i = a.start(len(a.calls))
		}
	default:
		i = len(a.calls) - 1
	}
	if i < 0 {
		return
	}
	c := &a.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if d.Function.Name != c.Name {
		// Names come whole in the first delta; a few endpoints repeat
		// them in every delta, and a few stream them in pieces.
		c.Name += d.Function.Name
	}
	a.args[i].WriteString(d.Function.Arguments)
}

func (a *callAssembler) start(index int) int {
	a.calls = append(a.calls, ToolCall{})
	a.index = append(a.index, index)
	a.args = append(a.args, &strings.Builder{})
	return len(a.calls) - 1
}

// done returns the calls in the endpoint's index order.
func (a *callAssembler) done() []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	order := make([]int, len(a.calls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return a.index[x] - a.index[y] })
	out := make([]ToolCall, len(a.calls))
	for k, i := range order {
		out[k] = a.calls[i]
		out[k].Arguments = a.args[i].String()
	}
	return out
}
