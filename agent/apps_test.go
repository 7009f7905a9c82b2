package agent_test

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// appsSetup is the features server as "f", whose app_show the model and
// its app may call and app_refresh the app alone (MCP Apps' visibility),
// both auto-approved: a call of app_refresh that got past the check would
// run at once. The model searches for its tools past search tools; both
// app tools are pinned, as an operator might.
func appsSetup(t *testing.T, search func(modelTools int) string) setup {
	t.Helper()
	return setup{
		servers: map[string]any{"f": testenv.FeaturesEntry(t, false, "app_show", "app_refresh")},
		config: func(w *wiring) {
			s, _ := w.Hub.Catalog().Server("f")
			if _, ok := s.Tool("app_refresh"); !ok {
				t.Fatalf("the hub's catalog lacks app_refresh: %+v", s.Tools)
			}
			w.Profile.ToolSearch = mcpgram.ToolSearch(search(len(s.Tools) - 1))
			w.PinnedTools = []mcpgram.ToolRef{{Server: "f", Tool: "app_show"}, {Server: "f", Tool: "app_refresh"}}
		},
	}
}

// seen is what a request shows the model of its tools: the system prompt
// and the functions offered.
func seen(req llmfake.Request) string {
	var b strings.Builder
	b.WriteString(req.Messages[0].Content)
	for _, f := range req.Tools {
		b.WriteString("\n" + f.Function.Name + ": " + f.Function.Description)
	}
	return b.String()
}

// A tool whose visibility leaves out the model (an MCP App's own tool)
// is, to the model, a tool its server does not have: the system prompt
// and the native functions leave it out, and it is not counted (a
// threshold of exactly the other tools lists them all, no search); a
// call of it gets the very feedback a call of a tool that does not
// exist gets, and never reaches the server; the tool the model and the
// app share is listed and runs.
func TestAppOnlyToolHiddenFromModel(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(useTool("f", "app_refresh", "{}"), useTool("f", "app_unknown", "{}"),
				useTool("f", "app_show", "{}"), complete("Shown.")), appsSetup(t, strconv.Itoa))
			if got := e.say("show the app").last(t); got.Kind != agent.EventAnswer || got.Text != "Shown." {
				t.Fatalf("last event = %+v", got)
			}
			calls := e.model.Calls()
			if len(calls) != 4 {
				t.Fatalf("%d model calls, want 4", len(calls))
			}
			for i, c := range calls {
				s := seen(c.Request)
				if strings.Contains(s, "app_refresh") || strings.Contains(s, "Refreshes the features app") {
					t.Errorf("call %d shows the model the app-only tool:\n%s", i+1, s)
				}
				if !strings.Contains(s, "app_show") || strings.Contains(s, "search_tools") {
					t.Errorf("call %d: want app_show listed and no search:\n%s", i+1, s)
				}
			}
			if m.native() && !slices.Contains(calls[0].Request.ToolNames(), "f__app_show") {
				t.Errorf("functions %q lack f__app_show", calls[0].Request.ToolNames())
			}
			hidden, unknown := read(calls[1].Request), read(calls[2].Request)
			if !strings.Contains(hidden, `has no tool "app_refresh"`) {
				t.Errorf("feedback on the app-only tool:\n%s", hidden)
			}
			if got := strings.ReplaceAll(hidden, "app_refresh", "app_unknown"); got != unknown {
				t.Errorf("feedback on the app-only tool:\n%s\nwant that on a tool that does not exist:\n%s", hidden, unknown)
			}
			if got := read(calls[3].Request); !strings.Contains(got, "app shown; refreshed 0 times") {
				t.Errorf("app_show's result:\n%s", got)
			}
			if a := e.audit(); len(a) != 1 || a[0].Tool != "app_show" || a[0].Status != "ok" {
				t.Errorf("audit = %+v, want app_show alone", a)
			}
		})
	}
}

// With tool search, the app-only tool is not counted in its server's
// tools, is not shown though pinned, and no search finds it.
func TestAppOnlyToolNotSearched(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			var modelTools int
			setup := appsSetup(t, func(n int) string { modelTools = n; return "0" })
			e := m.env(t, m.script(searchFor("refresh the features app view"), complete("Nothing.")), setup)
			if got := e.say("refresh the app").last(t); got.Kind != agent.EventAnswer {
				t.Fatalf("last event = %+v", got)
			}
			calls := e.model.Calls()
			if len(calls) != 2 {
				t.Fatalf("%d model calls, want 2", len(calls))
			}
			sys := seen(calls[0].Request)
			if want := "## f (" + strconv.Itoa(modelTools) + " tools)"; !strings.Contains(sys, want) || !strings.Contains(sys, "app_show") {
				t.Errorf("system prompt lacks %q or the pinned app_show:\n%s", want, sys)
			}
			found := read(calls[1].Request)
			if !strings.Contains(found, "[search_tools for 'refresh the features app view'] Result:") || !strings.Contains(found, "app_show") {
				t.Errorf("the search found:\n%s", found)
			}
			for _, s := range []string{sys, seen(calls[1].Request), found} {
				if strings.Contains(s, "app_refresh") {
					t.Errorf("the model was shown app_refresh:\n%s", s)
				}
			}
		})
	}
}

// startingHub is a hub whose catalog shows server f still starting (no
// tools known yet) until started; its servers are up all along.
type startingHub struct {
	agent.Hub
	started atomic.Bool
}

func (h *startingHub) Catalog() mcpgram.Catalog {
	cat := h.Hub.Catalog()
	if h.started.Load() {
		return cat
	}
	cat.Servers = slices.Clone(cat.Servers)
	for i, s := range cat.Servers {
		if s.Name == "f" {
			cat.Servers[i].Status, cat.Servers[i].Tools = mcpgram.StatusStarting, nil
		}
	}
	return cat
}

// A call of a server still starting names tools not known yet, so it is
// approved on a card whatever its name. Once the server is up, a call of
// one of its app-only tools is refused as one it does not have, approved
// (and auto-approved) as it is, and never reaches it.
func TestAppOnlyToolOfAServerThatWasStarting(t *testing.T) {
	t.Parallel()
	h := &startingHub{}
	setup := appsSetup(t, func(int) string { return "off" })
	pin := setup.config
	setup.config = func(w *wiring) { pin(w); h.Hub = w.Hub; w.Hub = h }
	e := newEnv(t, llmfake.Script(llmfake.Text(useTool("f", "app_refresh", "{}")), llmfake.Text(complete("done"))), setup)
	got := e.say("refresh the app").last(t)
	if got.Kind != agent.EventApproval || got.Approval.Tool != "app_refresh" {
		t.Fatalf("last event = %+v, want the call of app_refresh on a card", got)
	}
	h.started.Store(true)
	r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: got.Approval.PendingID, Approve: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.last(t); got.Kind != agent.EventAnswer || got.Text != "done" {
		t.Fatalf("last event = %+v, want the answer", got)
	}
	read := e.model.Calls()[1].Request.Last()
	if !strings.Contains(read, `Server "f" has no tool "app_refresh"`) || strings.Contains(read, "(ok)") {
		t.Errorf("the model read %q, want the call refused as of a tool the server does not have", read)
	}
	for _, c := range e.audit() {
		if c.Tool == "app_refresh" {
			t.Errorf("app_refresh ran: %+v", c)
		}
	}
}
