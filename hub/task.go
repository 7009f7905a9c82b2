// Tasks: a tools/call the server runs in the background answers with a
// handle, polled with tasks/get. Two forms are spoken: 2025-11-25's
// experimental one (the call asks in its "task" param, the result is
// collected with tasks/result), and on 2026-07-28 the Tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663: the call opts in in its _meta,
// the result rides in tasks/get's answer, input goes with tasks/update).
// Both map onto the same mcpgram.Task. The hub keeps no task state but
// which questions of a task were answered: the handle goes to the
// caller, who keeps it (durably) and asks again later, on the same
// account and sandbox as the call.

package hub

import (
	"cmp"
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

// tasksExtension names the Tasks extension of 2026-07-28.
const tasksExtension = "io.modelcontextprotocol/tasks"

// offersTask reports whether tool may be called as a task on c: on
// 2026-07-28, the server declared the Tasks extension (it then decides
// call by call); before, it declared task-augmented tools/call and the
// tool allows it.
func (c *conn) offersTask(tool string) bool {
	if c.client == nil {
		return false
	}
	if c.modern {
		_, ok := c.client.GetServerCapabilities().Extensions[tasksExtension]
		return ok
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

// taskParams readies the params of a request for c's form of tasks. A
// tools/call that asks for a task keeps its "task" on a 2025-11-25
// connection whose server offers one for tool, and loses it elsewhere; on
// a 2026-07-28 connection it opts in to the Tasks extension instead, where
// the server offers it (optIn: the request declares the extension in its
// _meta, see conn.jsonRPC). Requests of the extension's own methods opt
// in too, as it requires.
func (c *conn) taskParams(method string, params map[string]any, tool string) (_ map[string]any, optIn bool) {
	if strings.HasPrefix(method, "tasks/") {
		return params, c.modern
	}
	if method != string(mcp.MethodToolsCall) {
		return params, false
	}
	if _, asked := params["task"]; !asked {
		return params, false
	}
	offered := c.offersTask(tool)
	if offered && !c.modern {
		return params, false
	}
	params = maps.Clone(params)
	delete(params, "task")
	return params, offered
}

// taskMethod is method as c's form of tasks spells it: 2026-07-28 has no
// tasks/result, whose result rides in the answer to tasks/get.
func (c *conn) taskMethod(method string) string {
	if c.modern && method == string(mcp.MethodTasksResult) {
		return string(mcp.MethodTasksGet)
	}
	return method
}

// errUnaskedTask: a server answered a call that did not opt in with a
// task, which the Tasks extension forbids.
var errUnaskedTask = errors.New("the server answered with a task, which the call did not ask for")

// withTasksExtension is the client capabilities caps (mcp.ClientCapabilities),
// declaring the Tasks extension too.
func withTasksExtension(caps any) any {
	cc, ok := caps.(mcp.ClientCapabilities)
	if !ok {
		return caps
	}
	ext := maps.Clone(cc.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[tasksExtension] = map[string]any{}
	cc.Extensions = ext
	return cc
}

// GetTask asks server how task id, started by caller, stands.
func (h *Hub) GetTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksGet, id, "", nil)
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
// returns how it stands then: the Tasks extension only acknowledges a
// cancel, which the server may take its time to honour, so the task is
// asked after.
func (h *Hub) CancelTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksCancel, id, "", nil)
	if err != nil {
		return nil, err
	}
	var ack struct {
		TaskID *string `json:"taskId"`
	}
	if json.Unmarshal(raw, &ack) == nil && ack.TaskID == nil {
		return h.GetTask(ctx, caller, server, id)
	}
	t, err := decodeTask(raw, false)
	if err != nil {
		return nil, fmt.Errorf("cancel task on %q: %w", server, err)
	}
	return t, nil
}

// TaskResult fetches the result of task id, started by caller: ask once
// it is over, since a 2025-11-25 server holds the request until then.
func (h *Hub) TaskResult(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Result, error) {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksResult, id, "", nil)
	if err != nil {
		return nil, err
	}
	res, err := decodeTaskResult(raw)
	if err != nil {
		return nil, fmt.Errorf("task result on %q: %w", server, err)
	}
	return res, nil
}

// taskRequest sends method about task id, started with tool, to server
// for caller, with more params if any. A server that refuses the id
// (invalid params, as both forms answer an unknown task) gives
// ErrTaskUnknown.
func (h *Hub) taskRequest(ctx context.Context, caller mcpgram.Caller, server string, method mcp.MCPMethod, id, tool string, more map[string]any) (json.RawMessage, error) {
	if !validTaskID(id) {
		return nil, fmt.Errorf("%s: %w: malformed id", method, mcpgram.ErrTaskUnknown)
	}
	s, err := h.server(server)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	params := map[string]any{"taskId": id}
	maps.Copy(params, more)
	raw, err := s.request(ctx, string(method), params, caller, tool, "")
	if errors.Is(err, mcp.ErrInvalidParams) {
		err = fmt.Errorf("%w: %w", mcpgram.ErrTaskUnknown, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %q: %w", method, server, err)
	}
	return raw, nil
}

// wireTask is a task as a server sends it: 2025-11-25 names its times
// ttl and pollInterval, the Tasks extension ttlMs and pollIntervalMs.
type wireTask struct {
	TaskID         string   `json:"taskId"`
	Status         string   `json:"status"`
	StatusMessage  string   `json:"statusMessage"`
	CreatedAt      string   `json:"createdAt"`
	TTL            *float64 `json:"ttl"`
	TTLMs          *float64 `json:"ttlMs"`
	PollInterval   *float64 `json:"pollInterval"`
	PollIntervalMs *float64 `json:"pollIntervalMs"`
	// Error is why a task of the extension failed.
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// decodeTask reads a task from raw: from its "task" member if created by
// 2025-11-25 (a CreateTaskResult), else from raw itself (the extension's
// CreateTaskResult, tasks/get, 2025-11-25's tasks/cancel). A task with a
// malformed id or an unknown status is refused; the rest is bounded.
func decodeTask(raw json.RawMessage, created bool) (*mcpgram.Task, error) {
	var w struct {
		wireTask
		ResultType mcp.ResultType `json:"resultType"`
		Task       *wireTask      `json:"task"`
		Meta       struct {
			// What the model may be told while the task runs.
			Note string `json:"io.modelcontextprotocol/model-immediate-response"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode task: %w", err)
	}
	wt := w.wireTask
	switch {
	case created && w.Task != nil:
		wt = *w.Task
	case created && w.ResultType != resultTask:
		return nil, errors.New("decode task: no task in the result")
	}
	if !validTaskID(wt.TaskID) {
		return nil, errors.New("decode task: malformed task id")
	}
	t := &mcpgram.Task{
		ID:            wt.TaskID,
		Status:        mcpgram.TaskStatus(wt.Status),
		StatusMessage: oneLine(wt.StatusMessage, maxTaskMessage),
		TTL:           millis(cmp.Or(wt.TTLMs, wt.TTL), maxTaskTTL),
		PollInterval:  millis(cmp.Or(wt.PollIntervalMs, wt.PollInterval), maxTaskPollInterval),
		ModelNote:     oneLine(w.Meta.Note, maxModelNote),
	}
	if !t.Status.Known() {
		return nil, fmt.Errorf("decode task: unknown status %q", oneLine(wt.Status, 32))
	}
	if t.StatusMessage == "" && t.Status == mcpgram.TaskFailed && wt.Error != nil {
		t.StatusMessage = oneLine(wt.Error.Message, maxTaskMessage)
	}
	if at, err := time.Parse(time.RFC3339Nano, wt.CreatedAt); err == nil {
		t.CreatedAt = at
	}
	return t, nil
}

// resultTask is the resultType of the Tasks extension's CreateTaskResult.
const resultTask mcp.ResultType = "task"

// resultType is the resultType raw declares, "" if none.
func resultType(raw json.RawMessage) mcp.ResultType {
	var w struct {
		ResultType mcp.ResultType `json:"resultType"`
	}
	_ = json.Unmarshal(raw, &w)
	return w.ResultType
}

// isTaskCreated reports whether raw, the answer to a tools/call, is a
// CreateTaskResult rather than the call's result.
func isTaskCreated(raw json.RawMessage) bool {
	if resultType(raw) == resultTask {
		return true
	}
	var w struct {
		Task    json.RawMessage `json:"task"`
		Content json.RawMessage `json:"content"`
	}
	return json.Unmarshal(raw, &w) == nil && len(w.Task) > 0 && string(w.Task) != "null" && len(w.Content) == 0
}

// decodeTaskResult reads a task's result from raw: the answer to
// tasks/result (2025-11-25), the call's result itself, or to tasks/get
// (the Tasks extension), a task that carries its result once completed.
func decodeTaskResult(raw json.RawMessage) (*mcpgram.Result, error) {
	var w struct {
		wireTask
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	switch {
	case w.TaskID == "":
		return decodeCallResult(raw)
	case w.Status == string(mcpgram.TaskCompleted) && len(w.Result) > 0:
		return decodeCallResult(w.Result)
	case w.Status == string(mcpgram.TaskFailed) && w.Error != nil:
		return nil, fmt.Errorf("the task failed: %s", oneLine(w.Error.Message, maxTaskMessage))
	}
	return nil, fmt.Errorf("the task is %q, with no result", oneLine(w.Status, 32))
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
