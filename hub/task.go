// Tasks (MCP 2025-11-25, experimental): a tools/call the server runs in
// the background answers with a handle, polled with tasks/get and
// collected with tasks/result. The hub keeps no task state: the handle
// goes to the caller, who keeps it (durably) and asks again later, on the
// same account and sandbox as the call.

package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// Bounds on what a server says of a task: a hostile one must not fill a
// card, a row or the prompt.
const (
	maxTaskID      = 128
	maxTaskMessage = 300
	maxModelNote   = 1000
	// maxTaskTTL caps how long a task is waited for, whatever the server
	// says.
	maxTaskTTL          = 7 * 24 * time.Hour
	maxTaskPollInterval = time.Hour
)

// StartTool is CallTool that lets the call become a task: where the
// server offers task-augmented tools/call and the tool's
// execution.taskSupport is "optional" or "required", the call asks for a
// task kept ttl (0: the server's choice), and returns the server's handle
// instead of a result if it gave one. Elsewhere it is CallTool: exactly
// one of the Result and the Task is non-nil without an error.
func (h *Hub) StartTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any, ttl time.Duration) (*mcpgram.Result, *mcpgram.Task, error) {
	tp := &mcp.TaskParams{}
	if ttl > 0 {
		ms := ttl.Milliseconds()
		tp.TTL = &ms
	}
	return h.callTool(ctx, caller, server, tool, args, tp)
}

// offersTask reports whether tool may be called as a task on c: the
// server declared task-augmented tools/call and the tool allows it. The
// 2026-07-28 extension is another form, not spoken here.
func (c *conn) offersTask(tool string) bool {
	if c.modern || c.client == nil {
		return false
	}
	caps := c.client.GetServerCapabilities().Tasks
	if caps == nil || caps.Requests == nil || caps.Requests.Tools == nil || caps.Requests.Tools.Call == nil {
		return false
	}
	c.toolsMu.Lock()
	t, ok := c.tools[tool]
	c.toolsMu.Unlock()
	if !ok || t.Execution == nil {
		return false
	}
	return t.Execution.TaskSupport == mcp.TaskSupportOptional || t.Execution.TaskSupport == mcp.TaskSupportRequired
}

// withoutTask drops the request for a task from the params of a
// tools/call that c may not make a task of.
func (c *conn) withoutTask(method string, params map[string]any, tool string) map[string]any {
	if method != string(mcp.MethodToolsCall) {
		return params
	}
	if _, asked := params["task"]; !asked || c.offersTask(tool) {
		return params
	}
	params = maps.Clone(params)
	delete(params, "task")
	return params
}

// GetTask asks server how task id, started by caller, stands.
func (h *Hub) GetTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksGet, id)
	if err != nil {
		return nil, err
	}
	t, err := decodeTask(raw, false)
	if err != nil {
		return nil, fmt.Errorf("get task on %q: %w", server, err)
	}
	return t, nil
}

// CancelTask asks server to cancel task id, started by caller, and
// returns how it stands then.
func (h *Hub) CancelTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksCancel, id)
	if err != nil {
		return nil, err
	}
	t, err := decodeTask(raw, false)
	if err != nil {
		return nil, fmt.Errorf("cancel task on %q: %w", server, err)
	}
	return t, nil
}

// TaskResult fetches the result of task id, started by caller: ask once
// it is over, since a server holds the request until then.
func (h *Hub) TaskResult(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Result, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksResult, id)
	if err != nil {
		return nil, err
	}
	res, err := decodeCallResult(raw)
	if err != nil {
		return nil, fmt.Errorf("task result on %q: %w", server, err)
	}
	return res, nil
}

// taskRequest sends method about task id to server for caller. A server
// that refuses the id (invalid params, as the 2025-11-25 revision answers
// an unknown task) gives ErrTaskUnknown.
func (h *Hub) taskRequest(ctx context.Context, caller mcpgram.Caller, server string, method mcp.MCPMethod, id string) (json.RawMessage, error) {
	if !validTaskID(id) {
		return nil, fmt.Errorf("%s: %w: malformed id", method, mcpgram.ErrTaskUnknown)
	}
	s, err := h.server(server)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	raw, err := s.request(ctx, string(method), map[string]any{"taskId": id}, caller, "", "")
	if errors.Is(err, mcp.ErrInvalidParams) {
		err = fmt.Errorf("%w: %w", mcpgram.ErrTaskUnknown, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %q: %w", method, server, err)
	}
	return raw, nil
}

// wireTask is a task as a server sends it.
type wireTask struct {
	TaskID        string   `json:"taskId"`
	Status        string   `json:"status"`
	StatusMessage string   `json:"statusMessage"`
	CreatedAt     string   `json:"createdAt"`
	TTL           *float64 `json:"ttl"`
	PollInterval  *float64 `json:"pollInterval"`
}

// decodeTask reads a task from raw: from its "task" member if created (a
// CreateTaskResult), else from raw itself (tasks/get, tasks/cancel). A
// task with a malformed id or an unknown status is refused; the rest is
// bounded.
func decodeTask(raw json.RawMessage, created bool) (*mcpgram.Task, error) {
	var w struct {
		wireTask
		Task *wireTask `json:"task"`
		Meta struct {
			// What the model may be told while the task runs.
			Note string `json:"io.modelcontextprotocol/model-immediate-response"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode task: %w", err)
	}
	wt := w.wireTask
	if created {
		if w.Task == nil {
			return nil, errors.New("decode task: no task in the result")
		}
		wt = *w.Task
	}
	if !validTaskID(wt.TaskID) {
		return nil, errors.New("decode task: malformed task id")
	}
	t := &mcpgram.Task{
		ID:            wt.TaskID,
		Status:        mcpgram.TaskStatus(wt.Status),
		StatusMessage: oneLine(wt.StatusMessage, maxTaskMessage),
		TTL:           millis(wt.TTL, maxTaskTTL),
		PollInterval:  millis(wt.PollInterval, maxTaskPollInterval),
		ModelNote:     oneLine(w.Meta.Note, maxModelNote),
	}
	if !t.Status.Known() {
		return nil, fmt.Errorf("decode task: unknown status %q", oneLine(wt.Status, 32))
	}
	if at, err := time.Parse(time.RFC3339Nano, wt.CreatedAt); err == nil {
		t.CreatedAt = at
	}
	return t, nil
}

// isTaskCreated reports whether raw, the answer to a tools/call, is a
// CreateTaskResult rather than the call's result.
func isTaskCreated(raw json.RawMessage) bool {
	var w struct {
		Task    json.RawMessage `json:"task"`
		Content json.RawMessage `json:"content"`
	}
	return json.Unmarshal(raw, &w) == nil && len(w.Task) > 0 && string(w.Task) != "null" && len(w.Content) == 0
}

// validTaskID: an id the hub keeps, shows in no message, and sends back:
// printable, bounded.
func validTaskID(id string) bool {
	if id == "" || len(id) > maxTaskID || !utf8.ValidString(id) {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || r == ' ' }) < 0
}

// millis is a duration a server gave in milliseconds, in [0, max].
func millis(ms *float64, max time.Duration) time.Duration {
	if ms == nil || *ms <= 0 {
		return 0
	}
	if *ms >= float64(max.Milliseconds()) {
		return max
	}
	return time.Duration(*ms) * time.Millisecond
}
