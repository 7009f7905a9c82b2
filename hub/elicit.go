// Elicitation: a server asks the user for something in the middle of a
// call. A 2026-07-28 server answers the call "input_required" and the hub
// calls again with the answers (multi round-trip requests); a 2025 server
// sends an elicitation/create request while the call is in flight. Either
// way the hub hands the question to its Elicitor with who is asking, for
// whom, during which call, and sends the server exactly the answer.

package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
)

// A call is one tools/call or resources/read in flight, as far as what it
// may ask is concerned.
type call struct {
	ctx    context.Context
	caller mcpgram.Caller
	tool   string
	uri    string
	done   chan struct{} // closed when the request returned
	// asked counts the questions of the whole call, every round of it.
	asked *atomic.Int32
	clock *clock
	// progress receives what the server reports of the call's progress.
	progress mcpgram.ProgressFunc
	// tasks: the request opts in to the Tasks extension (see taskParams).
	tasks bool
	// task is the id of the task whose result a tasks/result waits for,
	// during which a 2025-11-25 server asks the task's questions.
	task string
}

// A clock is a request's timeout, stopped while the server waits for the
// user: the user's time is not the server's.
type clock struct {
	mu     sync.Mutex
	timer  *time.Timer
	d      time.Duration
	paused int
}

func newClock(d time.Duration, expire func()) *clock {
	return &clock{timer: time.AfterFunc(d, expire), d: d}
}

func (c *clock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused++; c.paused == 1 {
		c.timer.Stop()
	}
}

// resume starts the timeout over: the server has its whole time again to
// finish the call once it has its answer.
func (c *clock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused == 0 {
		c.timer.Reset(c.d)
	}
}

func (c *clock) stop() { c.timer.Stop() }

// elicit asks the user what p asks during cl, and returns what the server
// gets. schema is p's requested schema as the server wrote it, whose order
// of fields is the order to ask them in (mcp-go's decoding into a map
// loses it); nil: p's. It never fails: whatever goes wrong is answered
// "cancel".
func (s *server) elicit(cl *call, p mcp.ElicitationParams, schema json.RawMessage) mcp.ElicitationResult {
	cancel := mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}
	if n := cl.asked.Add(1); n > mcpgram.MaxElicitations {
		s.log.Warn("server asked the user more than the limit in one call; answered cancel", "limit", mcpgram.MaxElicitations, "tool", cl.tool)
		return cancel
	}
	e, err := s.elicitation(cl, p, schema)
	if err != nil {
		s.log.Warn("server asked the user something mcpgram cannot show; answered cancel", "tool", cl.tool, "err", err)
		return cancel
	}
	if s.hub.ask.Elicitor == nil {
		return cancel
	}
	res, err := s.hub.ask.Elicitor.Elicit(cl.ctx, e)
	if err != nil {
		if cl.ctx.Err() == nil {
			s.log.Warn("ask the user", "tool", cl.tool, "err", err)
		}
		return cancel
	}
	out := mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(res.Action)}}
	switch res.Action {
	case mcpgram.ElicitAccept:
		if e.Mode == mcpgram.ElicitForm {
			content := res.Content
			if content == nil {
				content = map[string]any{}
			}
			out.Content = content
		}
	case mcpgram.ElicitDecline, mcpgram.ElicitCancel:
	default:
		return cancel
	}
	return out
}

// elicitation is the Elicitation that p asks during cl.
func (s *server) elicitation(cl *call, p mcp.ElicitationParams, raw json.RawMessage) (mcpgram.Elicitation, error) {
	if err := p.Validate(); err != nil {
		return mcpgram.Elicitation{}, err
	}
	e := mcpgram.Elicitation{Caller: cl.caller, Server: s.name, Tool: cl.tool, URI: cl.uri, Mode: p.Mode, Message: p.Message}
	if e.Mode == "" {
		e.Mode = mcpgram.ElicitForm
	}
	if e.Mode == mcpgram.ElicitURL {
		e.URL, e.ID = p.URL, p.ElicitationID
		return e, nil
	}
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(p.RequestedSchema); err != nil {
			return mcpgram.Elicitation{}, fmt.Errorf("requested schema: %w", err)
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return mcpgram.Elicitation{}, fmt.Errorf("requested schema: %w", err)
	}
	e.Schema = compact.Bytes()
	return e, nil
}

// An inputRequest is one request of an input_required result, with the
// requested schema as written.
type inputRequest struct {
	method string
	params mcp.ElicitationParams
	schema json.RawMessage
}

// inputRequired reads an input_required result; ok is false for any
// other result.
func inputRequired(raw json.RawMessage) (requests map[string]inputRequest, state string, ok bool, err error) {
	var w struct {
		ResultType    mcp.ResultType    `json:"resultType"`
		RequestState  string            `json:"requestState"`
		InputRequests wireInputRequests `json:"inputRequests"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, "", false, fmt.Errorf("decode result: %w", err)
	}
	if w.ResultType != mcp.ResultTypeInputRequired {
		return nil, "", false, nil
	}
	requests, err = w.InputRequests.decode()
	if err != nil {
		return nil, "", false, err
	}
	return requests, w.RequestState, true, nil
}

// wireInputRequests are the inputRequests of an input_required result or
// task, as a server sends them.
type wireInputRequests map[string]struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// decode reads the requests, with the schema of each elicitation as
// written.
func (w wireInputRequests) decode() (map[string]inputRequest, error) {
	requests := make(map[string]inputRequest, len(w))
	for k, r := range w {
		in := inputRequest{method: r.Method}
		if r.Method == string(mcp.MethodElicitationCreate) {
			var schema struct {
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			}
			if err := json.Unmarshal(r.Params, &in.params); err != nil {
				return nil, fmt.Errorf("decode input request %q: %w", k, err)
			}
			_ = json.Unmarshal(r.Params, &schema)
			in.schema = schema.RequestedSchema
		}
		requests[k] = in
	}
	return requests, nil
}

// fulfil answers the input requests of an input_required result, one at a
// time, in the order of their keys.
func (s *server) fulfil(cl *call, requests map[string]inputRequest) (mcp.InputResponses, error) {
	keys := slices.Sorted(maps.Keys(requests))
	out := make(mcp.InputResponses, len(requests))
	for _, k := range keys {
		r := requests[k]
		if r.method != string(mcp.MethodElicitationCreate) {
			return nil, fmt.Errorf("the server asked for %s, which mcpgram does not offer", r.method)
		}
		if cl.ctx.Err() != nil {
			return nil, cl.ctx.Err()
		}
		out[k] = mcp.NewElicitationInputResponse(s.elicit(cl, r.params, r.schema))
	}
	return out, nil
}

// errElicitLoop fails a call whose server keeps asking.
var errElicitLoop = fmt.Errorf("the server asked the user more than %d times in one call, so mcpgram stopped the call", mcpgram.MaxElicitations)

// serverRequests answers the requests a 2025 server sends on c: ping, and
// elicitation/create, for which it finds the call that asks among those in
// flight. mcp-go calls it off its read loop, with a context that says
// nothing of the call over stdio. Anything else (sampling, roots) is
// refused: the hub does not declare it.
func (s *server) serverRequests(c *conn) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		switch req.Method {
		case string(mcp.MethodPing):
			return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
		case string(mcp.MethodElicitationCreate):
		default:
			return nil, fmt.Errorf("mcpgram does not offer %s", req.Method)
		}
		raw, err := json.Marshal(req.Params)
		if err != nil {
			return nil, err
		}
		var p mcp.ElicitationParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("invalid elicitation params: %w", err)
		}
		res := mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}
		if cl, release := c.calls.asking(ctx, relatedTask(raw)); cl != nil {
			res = s.elicit(cl, p, c.schemas.take(req.ID.String()))
			release()
		} else {
			s.log.Warn("server asked the user something outside any call, or during calls of several people, so that whom to ask cannot be told; answered cancel")
		}
		out, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		return transport.NewJSONRPCResultResponse(req.ID, out), nil
	}
}

// relatedTask is the id of the task a 2025-11-25 server's request says it
// is for (its _meta's io.modelcontextprotocol/related-task), "" if none.
func relatedTask(params json.RawMessage) string {
	var w struct {
		Meta struct {
			Related struct {
				TaskID string `json:"taskId"`
			} `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &w)
	return w.Meta.Related.TaskID
}

// schemas keeps the requested schemas of a stdio server's elicitation/create
// requests as the server wrote them, by request id, from when the line is
// read until the request is handled; at most a few, as a hostile server
// may send many it never needs answered.
type schemas struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

const keptSchemas = 16

func (k *schemas) put(id string, schema json.RawMessage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]json.RawMessage{}
	}
	if len(k.m) >= keptSchemas {
		for old := range k.m {
			delete(k.m, old)
			break
		}
	}
	k.m[id] = schema
}

func (k *schemas) take(id string) json.RawMessage {
	k.mu.Lock()
	defer k.mu.Unlock()
	schema := k.m[id]
	delete(k.m, id)
	return schema
}

// elicitationLine reads the id and requested schema of an
// elicitation/create request line.
func elicitationLine(line []byte) (id string, schema json.RawMessage, ok bool) {
	if !bytes.Contains(line, []byte(`"elicitation/create"`)) {
		return "", nil, false
	}
	var msg struct {
		ID     *mcp.RequestId `json:"id"`
		Method string         `json:"method"`
		Params struct {
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != string(mcp.MethodElicitationCreate) || msg.ID == nil || len(msg.Params.RequestedSchema) == 0 {
		return "", nil, false
	}
	return msg.ID.String(), msg.Params.RequestedSchema, true
}

// callKey carries the call in the context of its request, which mcp-go
// hands on to a request the server makes on the call's HTTP stream.
type callKey struct{}

// calls tracks a connection's calls in flight.
type calls struct {
	mu sync.Mutex
	m  map[string]*call
}

func (cs *calls) add(id string, cl *call) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]*call{}
	}
	cs.m[id] = cl
}

func (cs *calls) remove(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.m, id)
}

// asking finds the call a server's request belongs to: the one ctx names,
// or the tasks/result of the task the request says it is for, or else the
// calls in flight if they are all one caller's. Their timeouts stop until
// release. A group of calls yields one call that stands for them: it ends
// when all of them have, and names a tool only if they all call the same.
func (cs *calls) asking(ctx context.Context, task string) (*call, func()) {
	if cl, ok := ctx.Value(callKey{}).(*call); ok {
		cl.clock.pause()
		return cl, cl.clock.resume
	}
	cs.mu.Lock()
	group := slices.Collect(maps.Values(cs.m))
	cs.mu.Unlock()
	if i := slices.IndexFunc(group, func(cl *call) bool { return task != "" && cl.task == task }); i >= 0 {
		cl := group[i]
		cl.clock.pause()
		return cl, cl.clock.resume
	}
	if len(group) == 0 {
		return nil, nil
	}
	first := group[0]
	for _, cl := range group[1:] {
		if cl.caller.UserID != first.caller.UserID || cl.caller.ChatID != first.caller.ChatID {
			return nil, nil
		}
	}
	for _, cl := range group {
		cl.clock.pause()
	}
	release := func() {
		for _, cl := range group {
			cl.clock.resume()
		}
	}
	if len(group) == 1 {
		return first, release
	}
	return mergeCalls(group), release
}

// mergeCalls is a call standing for group, counting its questions with
// the first of them.
func mergeCalls(group []*call) *call {
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	go func() {
		defer cancel()
		for _, cl := range group {
			select {
			case <-cl.done:
			case <-cl.ctx.Done():
			}
		}
	}()
	merged := &call{ctx: ctx, caller: group[0].caller, done: make(chan struct{}), clock: group[0].clock, asked: group[0].asked}
	tools := map[string]bool{}
	for _, cl := range group {
		tools[cl.tool+"\x00"+cl.uri] = true
	}
	if len(tools) == 1 {
		merged.tool, merged.uri = group[0].tool, group[0].uri
	}
	return merged
}
