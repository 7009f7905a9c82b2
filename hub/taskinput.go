// A task's input: a task that needs something from the user stands
// input_required. In the Tasks extension's form its questions come in
// tasks/get's answer (inputRequests) and the answers go back with
// tasks/update; in 2025-11-25's the server asks them on the connection,
// as elicitation/create requests, while a tasks/result request waits.
// Either way the user is asked as for any question mid-call.

package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcpgram/mcpgram"
)

// AnswerTask asks caller what task id, started by caller with tool on
// server, waits for, through the hub's Elicitor with ctx (whose values
// tell it where to ask), and gives the server the answers. A task not
// waiting for input is left alone. In the extension's form, each question
// is asked once, however often the server lists it until it has the
// answer; in 2025-11-25's, AnswerTask holds tasks/result open until the
// task ends (the questions come meanwhile), and drops the result, which
// the poller collects.
func (h *Hub) AnswerTask(ctx context.Context, caller mcpgram.Caller, server, tool, id string) error {
	raw, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksGet, id, tool, nil)
	if err != nil {
		return err
	}
	var w struct {
		Status        mcpgram.TaskStatus `json:"status"`
		InputRequests wireInputRequests  `json:"inputRequests"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("answer task on %q: decode task: %w", server, err)
	}
	if w.Status != mcpgram.TaskInputRequired {
		return nil
	}
	if w.InputRequests == nil {
		_, err := h.taskRequest(ctx, caller, server, mcp.MethodTasksResult, id, tool, nil)
		return err
	}
	if len(w.InputRequests) > mcpgram.MaxElicitations {
		return fmt.Errorf("answer task on %q: %d questions at once, more than the %d of a call", server, len(w.InputRequests), mcpgram.MaxElicitations)
	}
	requests, err := w.InputRequests.decode()
	if err != nil {
		return fmt.Errorf("answer task on %q: %w", server, err)
	}
	// Each user of a per-user server has a process of their own, whose
	// ids may meet another's.
	key := caller.UserID + "\x00" + server + "\x00" + id
	for k := range requests {
		if h.answered.has(key, k) {
			delete(requests, k)
		}
	}
	if len(requests) == 0 {
		return nil
	}
	s, err := h.server(server)
	if err != nil {
		return err
	}
	cl := &call{ctx: ctx, caller: caller, tool: tool, asked: new(atomic.Int32)}
	answers, err := s.fulfil(cl, requests)
	if err != nil {
		return fmt.Errorf("answer task on %q: %w", server, err)
	}
	if _, err := h.taskRequest(ctx, caller, server, mcpTasksUpdate, id, tool, map[string]any{"inputResponses": answers}); err != nil {
		return err
	}
	h.answered.add(key, slices.Collect(maps.Keys(answers)))
	return nil
}

// mcpTasksUpdate gives a task of the extension its input.
const mcpTasksUpdate mcp.MCPMethod = "tasks/update"

// maxAnsweredTasks bounds the tasks whose answered questions the hub
// remembers: a task forgotten past it, still asking, is asked again.
const maxAnsweredTasks = 1024

// answered remembers, by task (its user, server and id), the keys of the
// questions answered, as the extension asks a client to, since a server
// lists a question until it has taken the answer in.
type answered struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func (a *answered) has(task, key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[task][key]
}

func (a *answered) add(task string, keys []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]map[string]bool{}
	}
	if _, ok := a.m[task]; !ok && len(a.m) >= maxAnsweredTasks {
		for old := range a.m {
			delete(a.m, old)
			break
		}
	}
	if a.m[task] == nil {
		a.m[task] = map[string]bool{}
	}
	for _, k := range keys {
		a.m[task][k] = true
	}
}
