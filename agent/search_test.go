package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// searchModes are the two ways of calling tools the search runs in.
var searchModes = []mode{modes[0], modes[1]}

// searchSetup is a set-up past the threshold: echo (its echo pinned),
// the github and slack servers of realtools (73 tools in all), a
// threshold of 20 tools, and metrics.
func searchSetup(t *testing.T, m *metrics.Metrics) setup {
	t.Helper()
	return setup{
		servers: map[string]any{
			"echo":   testenv.EchoEntry(t, "echo", "keep"),
			"github": testenv.RealToolsEntry(t, "github", 0, "list_issues"),
			"slack":  testenv.RealToolsEntry(t, "slack", 0, "slack_post_message"),
		},
		config: func(w *wiring) {
			w.Profile.ToolSearch = "20"
			w.PinnedTools = []mcpgram.ToolRef{{Server: "echo", Tool: "echo"}}
			w.Metrics = m
		},
	}
}

func searchFor(query string) string {
	return "Let me look.\n<search_tools>\n<query>" + query + "</query>\n</search_tools>"
}

const postMessage = `{"channel_id": "C1", "text": "hello team"}`

// TestSearchLoadCall: the model sees the servers and the pinned tool,
// searches, reads what it found in full (XML) or as functions it may now
// call (native), calls it, and answers; the system prompt is the same
// bytes on every call, and a native call's functions only grow at their
// end. The turn records the search, and that the model called what it
// found.
func TestSearchLoadCall(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			reg := metrics.New()
			e := m.env(t, m.script(searchFor("post a message to a slack channel"),
				useTool("slack", "slack_post_message", postMessage), complete("Posted.")), searchSetup(t, reg))
			if got := e.say("tell the team hello on slack").last(t); got.Kind != agent.EventAnswer || got.Text != "Posted." {
				t.Fatalf("last event = %+v", got)
			}
			calls := e.model.Calls()
			if len(calls) != 3 {
				t.Fatalf("%d model calls, want 3", len(calls))
			}
			sys := calls[0].Request.Messages[0].Content
			for _, want := range []string{"## github (65 tools)", "## slack (8 tools)", "search_tools"} {
				if !strings.Contains(sys, want) {
					t.Errorf("system prompt lacks %q", want)
				}
			}
			if strings.Contains(sys, "slack_post_message") || strings.Contains(sys, "create_issue") {
				t.Error("the system prompt lists tools that are neither pinned nor used")
			}
			for i, c := range calls {
				if c.Request.Messages[0].Content != sys {
					t.Errorf("call %d: the system prompt changed", i+1)
				}
			}
			found := read(calls[1].Request)
			if !strings.Contains(found, "[search_tools for 'post a message to a slack channel'] Result:") {
				t.Errorf("the model read after its search:\n%s", found)
			}
			if m.native() {
				first, second := calls[0].Request.ToolNames(), calls[1].Request.ToolNames()
				if want := []string{"echo__echo", "access_mcp_resource", "ask_followup_question", "attempt_completion", "search_tools"}; !slices.Equal(first, want) {
					t.Errorf("first call offers %q, want %q", first, want)
				}
				if len(second) <= len(first) || !slices.Equal(second[:len(first)], first) || !slices.Contains(second, "slack__slack_post_message") {
					t.Errorf("after the search: %q; want the first call's, then what was found", second)
				}
				if !strings.Contains(found, "now among your functions:\n- slack__slack_post_message (server slack): Post a new message to a Slack channel.") {
					t.Errorf("native search result:\n%s", found)
				}
			} else if !strings.Contains(found, "## slack\n- slack_post_message (server slack): Post a new message to a Slack channel.\n    Arguments:\n    - channel_id (string, required)") {
				t.Errorf("XML search result:\n%s", found)
			}
			if !strings.Contains(read(calls[2].Request), `slack_post_message ran with {"channel_id":"C1","text":"hello team"}`) {
				t.Errorf("the call's result:\n%s", read(calls[2].Request))
			}
			st := stats(t, e)
			if st.Search.Searches != 1 || st.Search.Empty != 0 || st.Search.Followed != 1 || len(st.Search.Tools) == 0 ||
				st.Search.Tools[0] != (store.FoundTool{Server: "slack", Tool: "slack_post_message", Found: 1, Called: 1}) {
				t.Errorf("recorded search = %+v", st.Search)
			}
			if got := sample(t, reg, "mcpgram_tool_searches_total", "model", "fake", "result", "found"); got != 1 {
				t.Errorf("searches found = %v, want 1", got)
			}
			if got := sample(t, reg, "mcpgram_tool_search_called_total", "server", "slack", "tool", "slack_post_message"); got != 1 {
				t.Errorf("called what it found = %v, want 1", got)
			}
			if got := sample(t, reg, "mcpgram_tool_search_found_total", "server", "slack", "tool", "slack_post_message"); got != 1 {
				t.Errorf("found = %v, want 1", got)
			}
		})
	}
}

// stats reads the day's statistics of e's store.
func stats(t *testing.T, e *env) store.Stats {
	t.Helper()
	now := e.clock()
	s, err := e.db.Stats(context.Background(), now.Add(-time.Hour), now.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSearchExactNameRuns: a tool called by its exact name runs without
// a search, after the usual check and approval: the card is the one any
// call gets.
func TestSearchExactNameRuns(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(useTool("github", "create_issue", `{"owner": "o", "repo": "r"}`),
				useTool("github", "create_issue", `{"owner": "o", "repo": "r", "title": "Crash"}`), complete("Opened.")), searchSetup(t, nil))
			r := e.say("open an issue")
			got := r.last(t)
			if got.Kind != agent.EventApproval || got.Approval.Server != "github" || got.Approval.Tool != "create_issue" ||
				got.Approval.Arguments != `{"owner":"o","repo":"r","title":"Crash"}` || got.Approval.Consent {
				t.Fatalf("last event = %+v (%+v), want the approval card of create_issue", got, got.Approval)
			}
			// The first call failed its schema, as any call would.
			if fb := read(e.model.Calls()[1].Request); !strings.Contains(fb, "missing property 'title'") {
				t.Errorf("feedback on the first call:\n%s", fb)
			}
			r, err := e.turn(agent.Request{Caller: alice, Decision: &agent.Decision{PendingID: got.Approval.PendingID, Approve: true}})
			if err != nil || r.last(t).Text != "Opened." {
				t.Fatalf("after approval: %v, %+v", err, r.last(t))
			}
			if audit := e.audit(); len(audit) == 0 || audit[0].Tool != "create_issue" || audit[0].Status != "ok" {
				t.Errorf("audit = %+v", audit)
			}
			if st := stats(t, e); st.Search.Searches != 0 {
				t.Errorf("no search was made, recorded %+v", st.Search)
			}
		})
	}
}

// TestSearchNearMiss: a name the catalog does not have gets the tools a
// search for it finds, and no search_tools call is needed to fix it.
func TestSearchNearMiss(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(useTool("github", "list_issue", `{"owner": "o", "repo": "r"}`),
				useTool("github", "list_issues", `{"owner": "o", "repo": "r"}`), complete("None open.")), searchSetup(t, nil))
			if got := e.say("any open issues?").last(t); got.Kind != agent.EventAnswer {
				t.Fatalf("last event = %+v", got)
			}
			fb := read(e.model.Calls()[1].Request)
			for _, want := range []string{`has no tool "list_issue"; did you mean "list_issues"?`,
				"Tools whose names or descriptions match it: ", `github__list_issues (tool "list_issues" on server "github")`} {
				if !strings.Contains(fb, want) {
					t.Errorf("feedback lacks %q:\n%s", want, fb)
				}
			}
			if len(fb) > 4000 {
				t.Errorf("feedback of %d bytes: a server's 65 tools are not all listed", len(fb))
			}
		})
	}
}

// TestSearchNoMatch: a search that finds nothing says so, and is
// recorded as such.
func TestSearchNoMatch(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			reg := metrics.New()
			e := m.env(t, m.script(searchFor("weather forecast for Lisbon"), complete("No weather tool is connected.")), searchSetup(t, reg))
			e.say("weather in Lisbon?")
			got := read(e.model.Calls()[1].Request)
			if !strings.Contains(got, "[search_tools for 'weather forecast for Lisbon'] Result:\nNo tool matches.") {
				t.Errorf("the model read:\n%s", got)
			}
			if st := stats(t, e); st.Search.Searches != 1 || st.Search.Empty != 1 || st.Search.Followed != 0 {
				t.Errorf("recorded %+v", st.Search)
			}
			if got := sample(t, reg, "mcpgram_tool_searches_total", "model", "fake", "result", "none"); got != 1 {
				t.Errorf("searches that found none = %v, want 1", got)
			}
		})
	}
}

// TestSearchConsentUnchanged: a tool found by a search that needs the
// user's consent gets the consent card, auto-approved or not.
func TestSearchConsentUnchanged(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(searchFor("keep a note"), useTool("echo", "keep", `{"mode": "write"}`)), searchSetup(t, nil))
			got := e.say("remember this").last(t)
			if got.Kind != agent.EventApproval || !got.Approval.Consent || got.Approval.Tool != "keep" {
				t.Fatalf("last event = %+v, want the consent card", got)
			}
			if !strings.Contains(read(e.model.Calls()[1].Request), "keep") {
				t.Errorf("the search did not find keep:\n%s", read(e.model.Calls()[1].Request))
			}
		})
	}
}

// TestSearchRecentTools: a tool the chat used goes, in its next turns,
// into the chat's part of the prompt (XML) or among the functions
// offered (native), after the shared part.
func TestSearchRecentTools(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script(useTool("slack", "slack_post_message", postMessage), "Posted.", "Hi."), searchSetup(t, nil))
			e.say("post hello")
			e.say("hi")
			calls := e.model.Calls()
			first, later := calls[0].Request, calls[2].Request
			if m.native() {
				if slices.Contains(first.ToolNames(), "slack__slack_post_message") || !slices.Contains(later.ToolNames(), "slack__slack_post_message") {
					t.Errorf("functions: first turn %q, next %q", first.ToolNames(), later.ToolNames())
				}
				return
			}
			shared := first.Messages[0].Content
			sys := later.Messages[0].Content
			if !strings.HasPrefix(sys, shared) || !strings.Contains(sys[len(shared):], "TOOLS THIS CHAT USED RECENTLY\n") ||
				!strings.Contains(sys[len(shared):], "- slack_post_message: Post a new message") {
				t.Errorf("next turn's prompt does not add the recent tool after the shared part:\n%s", sys[len(shared):])
			}
		})
	}
}

// TestBelowThresholdUnchanged: under the threshold, the prompt and the
// functions are those of a set-up that lists every tool, byte for byte.
func TestBelowThresholdUnchanged(t *testing.T) {
	t.Parallel()
	for _, m := range searchModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			e := m.env(t, m.script("Hello."), setup{})
			e.say("hi")
			req := e.model.Calls()[0].Request
			cat := e.hub.Catalog()
			if m.native() {
				if req.Messages[0].Content != prompt.BuildNative(cat) {
					t.Error("native prompt differs from BuildNative")
				}
				var want []string
				for _, f := range prompt.Functions(cat).Functions {
					want = append(want, f.Name)
				}
				if !slices.Equal(req.ToolNames(), want) {
					t.Errorf("functions %q, want %q", req.ToolNames(), want)
				}
				return
			}
			if req.Messages[0].Content != prompt.Build(cat) {
				t.Error("XML prompt differs from Build")
			}
		})
	}
}

// TestSearchLlmfakeAsNative: the fake's native replies carry searches as
// calls of search_tools, so the scenarios above run the same in both
// modes.
func TestSearchLlmfakeAsNative(t *testing.T) {
	t.Parallel()
	r := llmfake.AsNative(llmfake.Text(searchFor("x")))
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "search_tools" || r.ToolCalls[0].Arguments != `{"query":"x"}` {
		t.Errorf("AsNative = %+v", r.ToolCalls)
	}
}
