package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// request sends a tools/call or resources/read (of tool or uri) for
// caller on the current connection and returns the raw result. It
// bypasses mcp-go's typed calls, which fail to decode a whole result over
// one content type they don't know. A server that answers
// "input_required" gets its questions asked through the hub's Elicitor and
// the request again with the answers, up to MaxElicitations times.
func (s *server) request(ctx context.Context, method string, params map[string]any, caller mcpgram.Caller, tool, uri string) (json.RawMessage, error) {
	s.mu.Lock()
	perUser := s.cfg.account == AccountUser
	s.mu.Unlock()
	if perUser {
		return s.requestAs(ctx, method, params, caller, tool, uri)
	}
	c, cfg, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	return s.requestOn(ctx, c, cfg, method, params, caller, tool, uri)
}

// requestOn is request on the connection c.
func (s *server) requestOn(ctx context.Context, c *conn, cfg config, method string, params map[string]any, caller mcpgram.Caller, tool, uri string) (json.RawMessage, error) {
	params, optIn := c.taskParams(method, params, tool)
	cl := &call{ctx: ctx, caller: caller, tool: tool, uri: uri, asked: new(atomic.Int32), progress: mcpgram.ProgressOf(ctx), tasks: optIn}
	if method == string(mcp.MethodTasksResult) {
		cl.task, _ = params["taskId"].(string)
	}
	method = c.taskMethod(method)
	for round := 0; ; round++ {
		raw, err := s.send(ctx, c, cfg, method, params, cl)
		if err != nil {
			return nil, err
		}
		if c.modern && !optIn && resultType(raw) == resultTask {
			return nil, errUnaskedTask
		}
		requests, state, more, err := inputRequired(raw)
		if err != nil || !more {
			return raw, err
		}
		if round >= mcpgram.MaxElicitations {
			return nil, errElicitLoop
		}
		answers, err := s.fulfil(cl, requests)
		if err != nil {
			return nil, err
		}
		params = maps.Clone(params)
		params["inputResponses"] = answers
		if state != "" {
			params["requestState"] = state
		} else {
			delete(params, "requestState")
		}
	}
}

// send sends one request with the server's timeout, which stops while the
// server waits for the user (see clock). The call travels in the request's
// context, where a 2025 server's elicitation/create over HTTP finds it.
func (s *server) send(ctx context.Context, c *conn, cfg config, method string, params map[string]any, parent *call) (json.RawMessage, error) {
	timeout := cfg.timeout
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cl := &call{ctx: rctx, caller: parent.caller, tool: parent.tool, uri: parent.uri, asked: parent.asked, done: make(chan struct{}), progress: parent.progress, tasks: parent.tasks, task: parent.task}
	defer close(cl.done)
	cl.clock = newClock(timeout, func() { cancel(errTimeout) })
	defer cl.clock.stop()
	rctx = context.WithValue(rctx, callKey{}, cl)
	idText := requestID(c.nextID.Add(1))
	id := mcp.NewRequestId(idText)
	c.requests.add(idText)
	defer c.requests.remove(idText)
	c.calls.add(idText, cl)
	defer c.calls.remove(idText)
	if method == string(mcp.MethodToolsCall) || method == string(mcp.MethodResourcesRead) {
		// Every round has its own id, and its progress its own token.
		params = withProgressToken(params, idText)
	}
	resp, err := c.tr.SendRequest(rctx, c.jsonRPC(id, method, params, parent))
	if err != nil {
		if rctx.Err() != nil {
			c.cancelRequest(id, context.Cause(rctx))
			if context.Cause(rctx) == errTimeout {
				return nil, fmt.Errorf("%w after %s", mcpgram.ErrTimeout, seconds(timeout))
			}
			return nil, ctx.Err()
		}
		if errors.Is(err, transport.ErrTransportClosed) {
			// The process may live on with a broken pipe: have the run loop
			// stop it and start a new one.
			c.markLost()
			return nil, fmt.Errorf("connection lost during the call: %w", mcpgram.ErrNotRunning)
		}
		return nil, cfg.scrubErr(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return resp.Result, nil
}

// ready returns the live connection, waiting up to the server's timeout
// while it starts or restarts: a call a moment after a crash runs once the
// server is back instead of failing. A server down for good fails at once.
func (s *server) ready(ctx context.Context) (*conn, config, error) {
	var deadline <-chan time.Time
	for {
		wake := s.hub.changes()
		s.mu.Lock()
		c, cfg, status := s.conn, s.cfg, s.status
		s.mu.Unlock()
		switch {
		case c != nil:
			return c, cfg, nil
		case status != mcpgram.StatusStarting && status != mcpgram.StatusRestarting:
			// The reason stays in the status: it can quote the server's
			// stderr, and this error may reach the model and any user.
			return nil, cfg, fmt.Errorf("%w (%s)", mcpgram.ErrNotRunning, status)
		}
		if deadline == nil {
			t := time.NewTimer(cfg.timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-wake:
		case <-deadline:
			return nil, cfg, fmt.Errorf("%w: still %s after %s", mcpgram.ErrNotRunning, status, seconds(cfg.timeout))
		case <-ctx.Done():
			return nil, cfg, ctx.Err()
		}
	}
}

// seconds formats d the way users write timeouts in the settings file.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}
