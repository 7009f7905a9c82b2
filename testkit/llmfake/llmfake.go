// Package llmfake is a scripted OpenAI-compatible chat completions server
// for tests. It speaks the real wire format, plain JSON and SSE streaming,
// and answers each request with whatever a test's Handler decides from the
// request, so tests can both script the model and assert what it was sent.
// It speaks native tool calling too: a Reply's ToolCalls go out as
// "tool_calls", streamed as deltas by index; Native turns a scripted XML
// model into a native one; RejectTools plays an endpoint without tools;
// and every request's tools and tool history are checked as a strict
// endpoint checks them (see checkWire), a malformed one answered 400 and
// failing the test.
//
//	srv := llmfake.New(t, llmfake.Script(
//		llmfake.Reply{Status: 429, RetryAfter: "1"},
//		llmfake.Text("<attempt_completion><result>hi</result></attempt_completion>").Split(7),
//	))
//	client, _ := llm.New(mcpgram.Profile{BaseURL: srv.URL(), Model: "fake"}, llm.Options{})
package llmfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Images are the data URLs of a message sent as parts (text and
	// image_url), whose text parts make Content.
	Images []string `json:"-"`
	// ToolCalls are an assistant message's native calls; ToolCallID the
	// call a "tool" message answers.
	ToolCalls  []WireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// A WireToolCall is a tool call as an assistant message carries it.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments must be a JSON string holding the arguments' text.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// UnmarshalJSON reads content as a string or, as OpenAI's API takes it
// for images, as an array of parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []WireToolCall  `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Role, m.ToolCalls, m.ToolCallID = w.Role, w.ToolCalls, w.ToolCallID
	if len(w.Content) == 0 || w.Content[0] != '[' {
		return json.Unmarshal(cmpOr(w.Content, []byte(`""`)), &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(w.Content, &parts); err != nil {
		return err
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			m.Images = append(m.Images, p.ImageURL.URL)
		default:
			return fmt.Errorf("unknown content part type %q", p.Type)
		}
	}
	m.Content = strings.Join(texts, "\n")
	return nil
}

func cmpOr(b, def []byte) []byte {
	if len(b) == 0 || string(b) == "null" {
		return def
	}
	return b
}

// A Request is what a client sent, decoded from the wire independently of
// any client library, so tests see exactly what reached the model.
type Request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Stream      bool      `json:"stream"`
	Temperature *float64  `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	// StreamOptions as sent; IncludeUsage asks for a final usage chunk.
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Tools are the native functions offered; ParallelToolCalls as sent.
	Tools             []WireTool `json:"tools"`
	ParallelToolCalls *bool      `json:"parallel_tool_calls"`
	ToolChoice        any        `json:"tool_choice"`
	// Header holds the request's HTTP headers (Authorization included).
	Header http.Header `json:"-"`
	// RemoteAddr is the client's address: the same for requests that
	// reused one connection.
	RemoteAddr string `json:"-"`
	// Bytes is the size of the request's body as sent: what a model call
	// costs to send.
	Bytes int `json:"-"`
}

// Last returns the content of the last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// A WireTool is one function offered in "tools".
type WireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ToolNames returns the names of the functions offered.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Function.Name
	}
	return out
}

// A Usage is what the server reports as token counts.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// A Reply is what the server answers one request with.
type Reply struct {
	// Content is the reply text.
	Content string
	// Reasoning is sent apart from the content, as "reasoning_content"
	// (reasoning models' endpoints do so); streamed, it comes before the
	// content, in pieces of ArgChunk bytes (all at once when 0).
	Reasoning string
	// Chunks, when set, is how a streamed reply is cut into deltas (their
	// concatenation is the reply; Content is then ignored). Unset, a
	// streamed reply is one delta.
	Chunks []string
	// ToolCalls are native calls the reply makes, after its content.
	// Streamed, each comes as deltas of its index: the first with its id
	// and name, then its arguments in pieces of ArgChunk bytes (all at
	// once when 0).
	ToolCalls []ToolCall
	ArgChunk  int
	// Interleave sends the calls' deltas taking turns, a delta of each
	// call in index order, as endpoints that stream calls in parallel do.
	Interleave bool
	// Status, when not 0 or 200, answers with that HTTP status and an
	// OpenAI-style error body carrying Error (or a default message).
	Status int
	Error  string
	// RetryAfter is sent as the Retry-After header when not empty.
	RetryAfter string
	// Delay before the response headers are written.
	Delay time.Duration
	// Hold, when not nil, is waited on after Delay, before the response
	// headers are written: a test keeps calls in flight until it closes
	// it.
	Hold <-chan struct{}
	// ChunkDelay between two streamed chunks.
	ChunkDelay time.Duration
	// DropAfter, when > 0, cuts the connection after that many streamed
	// content chunks, as a crashing upstream would.
	DropAfter int
	// Repeat, when > 1, streams the content chunks that many times over,
	// without the fake holding the whole reply: a huge reply. Endless
	// streams them again and again until the client hangs up, as a
	// runaway endpoint does. Both apply to streamed replies only.
	Repeat  int
	Endless bool
	// StreamError, when set, is sent as an in-stream error event after the
	// content chunks, as some providers report failures midway.
	StreamError string
	// Usage to report; nil reports a count derived from the byte lengths
	// (bytes/4), so token accounting is always exercised.
	Usage *Usage
	// NoUsage reports no usage at all, as some compatible endpoints do:
	// no "usage" in a plain reply, no usage chunk in a stream.
	NoUsage bool
	// FinishReason; default "stop".
	FinishReason string
	// NoFinish leaves out the streamed chunk carrying the finish reason,
	// and NoDone the closing "data: [DONE]": with both, the body ends
	// cleanly after the content, as a proxy that gives up midway ends it.
	NoFinish bool
	NoDone   bool
}

// Text is a 200 reply with content s.
func Text(s string) Reply { return Reply{Content: s} }

// A ToolCall is a native call of a Reply. An empty ID gets one made of
// the call's position.
type ToolCall struct {
	ID, Name, Arguments string
}

// Calls is a 200 reply making native calls, with no content.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Fn is a ToolCall of name with args marshalled to JSON.
func Fn(name string, args any) ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return ToolCall{Name: name, Arguments: string(b)}
}

// Split returns r streamed in chunks of n bytes (the last one shorter;
// one longer where a character would be cut, as an endpoint's JSON
// carries whole characters), which cuts tags at arbitrary places; tool
// calls' arguments and the reasoning are cut the same way.
func (r Reply) Split(n int) Reply {
	r.ArgChunk = n
	r.Chunks = pieces(r.text(), n)
	if r.Chunks == nil {
		r.Chunks = []string{""}
	}
	return r
}

func (r Reply) text() string {
	if r.Chunks != nil {
		return strings.Join(r.Chunks, "")
	}
	return r.Content
}

// A Call is one request the server received: N counts from 1.
type Call struct {
	N       int
	Request Request
}

// A Handler decides the reply to a call. Calls to it are serialised, so a
// handler may keep state without locking.
type Handler func(Call) Reply

// Script returns a Handler answering the n-th call with replies[n-1]; a
// call beyond the script gets a 500 saying so (and fails the test through
// Server.Err).
func Script(replies ...Reply) Handler {
	return func(c Call) Reply {
		if c.N > len(replies) {
			return Reply{Status: http.StatusInternalServerError, Error: fmt.Sprintf("llmfake: script has %d replies, got call %d", len(replies), c.N)}
		}
		return replies[c.N-1]
	}
}

// A Server is a running fake endpoint.
type Server struct {
	srv     *httptest.Server
	handler Handler

	mu             sync.Mutex
	calls          []Call
	problems       []string
	transcriber    Transcriber
	transcriptions []Transcription
}

// New starts a Server answering with h; it stops when t ends, and the
// test fails if the server received malformed requests or ran off the end
// of a Script.
func New(t testing.TB, h Handler) *Server {
	t.Helper()
	s := &Server{handler: h}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serve)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcribe)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
		for _, p := range s.Problems() {
			t.Errorf("llmfake: %s", p)
		}
	})
	return s
}

// URL is the base URL to configure a client with (it ends in /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Calls returns the calls received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Problems returns what went wrong on the server side: malformed requests
// and script overruns.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// TakeProblems returns the problems so far and forgets them, for a test
// that provokes them on purpose.
func (s *Server) TakeProblems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.problems
	s.problems = nil
	return p
}

func (s *Server) problem(format string, args ...any) {
	s.mu.Lock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		s.problem("request body is not JSON: %v", err)
		writeError(w, Reply{Status: http.StatusBadRequest, Error: err.Error()})
		return
	}
	req.Header = r.Header.Clone()
	req.RemoteAddr = r.RemoteAddr
	req.Bytes = len(body)
	if req.Model == "" || len(req.Messages) == 0 {
		s.problem("request without model or messages: %s", body)
	}
	if err := checkWire(req); err != nil {
		// What a real endpoint answers 400, and a test must not pass.
		s.problem("%v", err)
		writeError(w, Reply{Status: http.StatusBadRequest, Error: err.Error()})
		return
	}

	s.mu.Lock()
	call := Call{N: len(s.calls) + 1, Request: req}
	s.calls = append(s.calls, call)
	reply := s.handler(call)
	s.mu.Unlock()
	if reply.Status == http.StatusInternalServerError && strings.HasPrefix(reply.Error, "llmfake: script") {
		s.problem("%s", reply.Error)
	}

	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeError(w, reply)
		return
	}
	if req.Stream {
		s.stream(w, r, req, reply)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply.completion(req))
}

// completion is r as a whole chat.completion object, as an endpoint
// answers a request that does not stream.
func (r Reply) completion(req Request) map[string]any {
	text := r.text()
	msg := map[string]any{"role": "assistant", "content": text}
	if r.Reasoning != "" {
		msg["reasoning_content"] = r.Reasoning
	}
	if len(r.ToolCalls) > 0 {
		msg["tool_calls"] = r.wireCalls()
	}
	out := map[string]any{
		"id":      "chatcmpl-fake",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"finish_reason": r.finish(),
		}},
	}
	if !r.NoUsage {
		out["usage"] = r.usage(req, text)
	}
	return out
}

func (r Reply) finish() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (r Reply) callID(i int) string {
	if id := r.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_fake_%d", i)
}

func (r Reply) wireCalls() []any {
	out := make([]any, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		out[i] = map[string]any{
			"id": r.callID(i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments},
		}
	}
	return out
}

func (r Reply) usage(req Request, text string) map[string]any {
	u := Usage{CompletionTokens: len(text) / 4}
	if r.Usage != nil {
		u = *r.Usage
	} else {
		for _, m := range req.Messages {
			u.PromptTokens += len(m.Content) / 4
		}
	}
	return map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
}

func writeError(w http.ResponseWriter, reply Reply) {
	msg := reply.Error
	if msg == "" {
		msg = http.StatusText(reply.Status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "fake_error", "code": reply.Status},
	})
}
