// Command tasks is a hand-written MCP server of the 2026-07-28 revision
// that offers the Tasks extension (io.modelcontextprotocol/tasks), for the
// tests of the hub and of the bot above it; mcp-go's server does not speak
// the extension. Its tools:
//
//   - slow: a report on topic, run as a task where the call opts in (a
//     result at once where it does not); each tasks/get moves the task one
//     of its steps on, so that a test sees its stages without a clock.
//   - ask: a task that first asks the user how deep to go (input_required,
//     an elicitation in tasks/get's inputRequests) and completes once
//     tasks/update brings the answer; refused without the opt-in (-32021).
//   - crowd: a task that asks eleven questions at once, more than a
//     client takes.
//   - rogue: answers with a task even where the call did not opt in.
//
// With -http it serves Streamable HTTP instead of stdio, and outlives the
// bot as a remote server does.
//
// It answers tasks/get, tasks/update and tasks/cancel only for a request
// that declares the extension, as the extension asks, and like an
// eventually consistent server it lists an answered question once more
// after tasks/update.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

const extension = "io.modelcontextprotocol/tasks"

// A request is one JSON-RPC request, as far as this server reads it.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		TaskID    string         `json:"taskId"`
		// InputResponses answer a task's questions (tasks/update).
		InputResponses map[string]struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		} `json:"inputResponses"`
		Meta struct {
			Caps struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// optsIn reports whether the request declares the Tasks extension.
func (r *request) optsIn() bool {
	_, ok := r.Params.Meta.Caps.Extensions[extension]
	return ok
}

// A task is one the server runs.
type task struct {
	id, topic     string
	status        string
	message       string
	steps, polls  int
	created       time.Time
	result        map[string]any
	asking        map[string]any // the outstanding inputRequests
	answeredAgain map[string]any // listed once more after its answer
}

type server struct {
	mu    sync.Mutex
	tasks map[string]*task
	next  int
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (its URL printed first on stdout) instead of stdio")
	flag.Parse()
	s := &server{tasks: map[string]*task{}}
	if *addr != "" {
		s.serveHTTP(*addr)
		return
	}
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var req request
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification, or not JSON
		}
		_ = out.Encode(s.answer(&req))
	}
}

// answer is the JSON-RPC answer to req.
func (s *server) answer(req *request) map[string]any {
	result, err := s.handle(req)
	if err != nil {
		return map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": err}
	}
	result["resultType"] = cmpOr(result["resultType"], "complete")
	return map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}
}

// serveHTTP serves the server at /mcp of addr, each request answered in
// JSON, a server that outlives its clients, as a remote one does: a
// client restarted polls the tasks it started before. POST /finish ends
// every working task at its next tasks/get, when the test says.
func (s *server) serveHTTP(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", l.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		var req request
		if json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req) != nil {
			http.Error(w, "not JSON-RPC", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.answer(&req))
	})
	mux.HandleFunc("POST /finish", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, t := range s.tasks {
			t.steps = t.polls
		}
	})
	fmt.Fprintln(os.Stderr, http.Serve(l, mux))
}

// rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

var (
	errNoMethod = &rpcError{Code: -32601, Message: "Method not found"}
	errNoTask   = &rpcError{Code: -32602, Message: "Failed to retrieve task: Task not found"}
	errNoOptIn  = &rpcError{Code: -32021, Message: "Missing required client capability",
		Data: map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extension: map[string]any{}}}}}
)

func (s *server) handle(req *request) (map[string]any, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Method {
	case "server/discover":
		return map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{}, "extensions": map[string]any{extension: map[string]any{}}},
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}},
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []map[string]any{
			tool("slow", "Writes a report on topic in steps (default 3), in the background where the client can."),
			tool("ask", "Writes a report on topic, asking the user how deep to go; needs the Tasks extension."),
			tool("crowd", "Asks eleven questions at once."),
			tool("rogue", "Answers with a task whatever the client said."),
		}}, nil
	case "tools/call":
		return s.call(req)
	case "tasks/get", "tasks/update", "tasks/cancel":
		if !req.optsIn() {
			return nil, errNoOptIn
		}
		t, ok := s.tasks[req.Params.TaskID]
		if !ok {
			return nil, errNoTask
		}
		return s.taskMethod(req, t), nil
	}
	return nil, errNoMethod
}

func tool(name, description string) map[string]any {
	return map[string]any{"name": name, "description": description, "inputSchema": map[string]any{
		"type": "object", "properties": map[string]any{"topic": map[string]any{"type": "string"}, "steps": map[string]any{"type": "integer"}},
	}}
}

// call runs a tools/call: a task where the client opted in (always for
// rogue), else the result at once, or the refusal of ask.
func (s *server) call(req *request) (map[string]any, *rpcError) {
	topic, _ := req.Params.Arguments["topic"].(string)
	optIn := req.optsIn()
	switch {
	case req.Params.Name == "ask" && !optIn:
		return nil, errNoOptIn
	case req.Params.Name == "slow" && !optIn:
		return text("Report on " + topic + " (no task)"), nil
	case req.Params.Name != "slow" && req.Params.Name != "ask" && req.Params.Name != "crowd" && req.Params.Name != "rogue":
		return nil, &rpcError{Code: -32602, Message: "Unknown tool"}
	}
	s.next++
	t := &task{id: "task-" + strconv.Itoa(s.next), topic: topic, status: "working", message: "Starting", steps: 3, created: time.Now()}
	if n, ok := req.Params.Arguments["steps"].(float64); ok {
		t.steps = int(n)
	}
	if req.Params.Name == "ask" {
		t.steps = 0
		t.asking = map[string]any{"depth": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "How deep should the report on " + topic + " go?",
			"requestedSchema": map[string]any{"type": "object", "required": []string{"depth"}, "properties": map[string]any{
				"depth": map[string]any{"type": "string", "title": "Depth", "enum": []string{"brief", "thorough"}},
			}},
		}}}
	}
	if req.Params.Name == "crowd" {
		t.steps, t.asking = 0, map[string]any{}
		for i := range 11 {
			t.asking["q"+strconv.Itoa(i)] = map[string]any{"method": "elicitation/create", "params": map[string]any{
				"mode": "form", "message": "Question " + strconv.Itoa(i),
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
			}}
		}
	}
	s.tasks[t.id] = t
	out := t.wire()
	out["resultType"] = "task"
	return out, nil
}

// taskMethod answers tasks/get, tasks/update or tasks/cancel on t.
func (s *server) taskMethod(req *request, t *task) map[string]any {
	switch req.Method {
	case "tasks/cancel":
		if t.status == "working" || t.status == "input_required" {
			t.status, t.message, t.asking = "cancelled", "Cancelled at the client's request", nil
		}
		return map[string]any{}
	case "tasks/update":
		t.update(req)
		return map[string]any{}
	}
	t.advance()
	out := t.wire()
	if t.answeredAgain != nil {
		out["status"], out["inputRequests"] = "input_required", t.answeredAgain
		delete(out, "result")
		t.answeredAgain = nil
	}
	return out
}

// update takes the answer to t's question in, if it is outstanding.
func (t *task) update(req *request) {
	res, ok := req.Params.InputResponses["depth"]
	if !ok || t.asking == nil {
		return
	}
	t.answeredAgain, t.asking = t.asking, nil
	depth, _ := res.Content["depth"].(string)
	if res.Action != "accept" || depth == "" {
		t.status, t.message, t.result = "completed", "", text("No report on "+t.topic+": the user said "+res.Action)
		return
	}
	t.status, t.message, t.result = "completed", "", text("A "+depth+" report on "+t.topic)
}

// advance moves a working task one step on, as a poll sees it.
func (t *task) advance() {
	switch {
	case t.status != "working":
	case t.asking != nil:
		t.status, t.message = "input_required", "Waiting for the user"
	case t.polls >= t.steps:
		t.status, t.message, t.result = "completed", "", text("Report on "+t.topic)
	default:
		t.polls++
		t.message = fmt.Sprintf("Step %d of %d", t.polls, t.steps)
	}
}

// wire is t as the extension sends a task: its inputRequests while it
// asks, its result once completed.
func (t *task) wire() map[string]any {
	out := map[string]any{
		"taskId": t.id, "status": t.status, "createdAt": t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": time.Now().UTC().Format(time.RFC3339Nano), "ttlMs": 60000, "pollIntervalMs": 200,
	}
	if t.message != "" {
		out["statusMessage"] = t.message
	}
	if t.status == "input_required" {
		out["inputRequests"] = t.asking
	}
	if t.status == "completed" {
		out["result"] = t.result
	}
	return out
}

func text(s string) map[string]any {
	return map[string]any{"content": []map[string]any{{"type": "text", "text": s}}, "isError": false}
}

func cmpOr(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}
