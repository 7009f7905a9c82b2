package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"go.uber.org/goleak"
)

var alice = mcpgram.Caller{UserID: "111", ChatID: "500"}

// env is one agent wired to a scripted model, real MCP servers through a
// real hub, and a real database.
type env struct {
	t        *testing.T
	model    *llmfake.Server
	hub      *hub.Hub
	db       *sqlite.DB
	agent    *agent.Agent
	settings string
	dbPath   string
	cfg      func(*wiring)
	now      time.Time
	mu       sync.Mutex
	// asking is set when the hub asks through the agent: the agent is
	// then made before the hub starts, as the program wires it, and is
	// the only one the hub ever asks.
	asking bool
}

type setup struct {
	// servers are the settings file's entries; default the test server
	// hub/testdata/echo as "echo", with echo, add and sleep auto-approved.
	// It starts in milliseconds, so every test has a hub of its own.
	servers map[string]any
	// launch starts the hub without waiting for its servers, as the bot
	// does.
	launch bool
	// elicit makes the agent the hub's Elicitor; the env's agent cannot
	// then be replaced (restart, wire).
	elicit bool
	// auth signs the hub in to protected servers; with elicit, the agent
	// is its Connector too.
	auth   mcpgram.Authorizer
	config func(*wiring)
}

// A wiring is what newEnv hands agent.New, for a test to change: the
// profile of the env's own model ("default", on the scripted server),
// models after it, the store, the hub and the options.
type wiring struct {
	mcpgram.Profile
	agent.Options
	Others []agent.Model
	Store  agent.Store
	Hub    agent.Hub
}

// TestMain fails the run if a goroutine is left once every test is done:
// an agent's turns, and the hubs the tests start, must end what they
// start.
func TestMain(m *testing.M) {
	testenv.Prepare()
	if err := testenv.PutBundledOnPath(); err != nil { // for the example
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// echoServer is the default settings entry of a test's hub.
func echoServer(t *testing.T) map[string]any {
	t.Helper()
	return testenv.EchoEntry(t, "echo", "add", "sleep")
}

func newEnv(t *testing.T, h llmfake.Handler, s setup) *env {
	t.Helper()
	e := &env{t: t, now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	servers := s.servers
	if servers == nil {
		servers = map[string]any{"echo": echoServer(t)}
	}
	e.settings = testenv.WriteSettings(t, t.TempDir(), servers)
	// The hub first, then the agent that calls tools through it, then
	// (when the agent asks what servers ask) the hub told so, and only
	// then started: the program's two phases. A hub that asks nobody
	// starts at once, its servers coming up while the rest is made.
	e.hub = testenv.NewHub(t, e.settings, hub.Options{NoWatch: true, Auth: s.auth})
	start := func() {
		if s.launch {
			if err := e.hub.Launch(); err != nil {
				t.Fatal(err)
			}
			return
		}
		testenv.Start(t, e.hub)
		testenv.Running(t, e.hub)
	}
	if !s.elicit {
		start()
	}
	e.dbPath = filepath.Join(t.TempDir(), "mcpgram.db")
	e.db = testenv.SQLite(t, e.dbPath)
	e.cfg = s.config
	e.model = llmfake.New(t, h)
	e.wire()
	if s.elicit {
		ask := hub.Askers{Elicitor: e.agent}
		if s.auth != nil {
			ask.Connector = e.agent
		}
		if err := e.hub.AskThrough(ask); err != nil {
			t.Fatal(err)
		}
		e.asking = true
		start()
	}
	return e
}

// wire makes e's agent over e.db, the test's changes applied. An env
// whose hub asks through its agent has that one agent for good.
func (e *env) wire() {
	e.t.Helper()
	if e.asking {
		e.t.Fatal("the hub asks through the env's first agent: it cannot be replaced")
	}
	w := wiring{
		Profile: mcpgram.Profile{Name: "default", BaseURL: e.model.URL(), Model: "fake", Temperature: 0.5},
		Options: agent.Options{Now: e.clock},
		Store:   e.db,
		Hub:     e.hub,
	}
	if e.cfg != nil {
		e.cfg(&w)
	}
	client, err := llm.New(w.Profile, llm.Options{Backoff: time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	if e.agent, err = agent.New(w.Store, w.Hub, append([]agent.Model{client}, w.Others...), w.Options); err != nil {
		e.t.Fatal(err)
	}
}

// restart replaces the agent and the database connection with new ones,
// as a restarted process would have: only what is on disk carries over.
func (e *env) restart() {
	e.t.Helper()
	if err := e.db.Close(); err != nil {
		e.t.Fatal(err)
	}
	db := testenv.SQLite(e.t, e.dbPath)
	e.db = db
	e.wire()
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
	return e.now
}

// A recorder collects a turn's events.
type recorder struct {
	testenv.List[agent.Event]
}

// emit is the turn's agent.Emit.
func (r *recorder) emit(ev agent.Event) { r.Add(ev) }

func (r *recorder) kinds(k agent.EventKind) []agent.Event {
	var out []agent.Event
	for _, ev := range r.All() {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// last returns the terminal event, failing unless there is exactly one
// and it comes last.
func (r *recorder) last(t *testing.T) agent.Event {
	t.Helper()
	evs := r.All()
	n := 0
	for _, ev := range evs {
		switch ev.Kind {
		case agent.EventAnswer, agent.EventQuestion, agent.EventApproval, agent.EventError:
			n++
		}
	}
	if n != 1 || len(evs) == 0 {
		t.Fatalf("got %d terminal events in %v, want exactly 1", n, kindsOf(evs))
	}
	last := evs[len(evs)-1]
	switch last.Kind {
	case agent.EventAnswer, agent.EventQuestion, agent.EventApproval, agent.EventError:
	default:
		t.Fatalf("last event is %v, want a terminal one", last.Kind)
	}
	return last
}

func kindsOf(evs []agent.Event) []agent.EventKind {
	out := make([]agent.EventKind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// turn runs one turn and returns its events.
func (e *env) turn(req agent.Request) (*recorder, error) {
	e.t.Helper()
	r := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := e.agent.Turn(ctx, req, r.emit)
	return r, err
}

func (e *env) say(text string) *recorder {
	e.t.Helper()
	r, err := e.turn(agent.Request{Caller: alice, Text: text})
	if err != nil && r.last(e.t).Kind != agent.EventError {
		e.t.Fatalf("turn %q: %v", text, err)
	}
	return r
}

func (e *env) history() []store.Message {
	e.t.Helper()
	ctx := context.Background()
	conv, err := e.db.CurrentConversation(ctx, alice.ChatID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	msgs, err := e.db.Messages(ctx, conv)
	if err != nil {
		e.t.Fatal(err)
	}
	return msgs
}

func (e *env) audit() []store.ToolCall {
	e.t.Helper()
	calls, err := e.db.ToolCalls(context.Background(), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return calls
}

// Replies a model would write.
func useTool(server, tool, args string) string {
	return "<use_mcp_tool>\n<server_name>" + server + "</server_name>\n<tool_name>" + tool + "</tool_name>\n<arguments>\n" + args + "\n</arguments>\n</use_mcp_tool>"
}

func complete(result string) string {
	return "<attempt_completion>\n<result>\n" + result + "\n</result>\n</attempt_completion>"
}

func echo(msg string) string { return useTool("echo", "echo", `{"message": "`+msg+`"}`) }

// echoed is how the result of echo(msg) reads to the model.
func echoed(msg string) string { return "Result:\n```\n" + msg + "\n```" }

// waitStderr waits, for up to 10 seconds, until server has written line
// to its stderr; it is for a goroutine, which cannot fail the test: a
// test that needed the line fails on what follows.
func waitStderr(h *hub.Hub, server, line string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s, err := h.Stderr(server); err == nil && strings.Contains(s, line) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
