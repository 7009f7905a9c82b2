package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A toolCount is a set-up of n tools shaped like real ones: the servers
// of realtools.Take(n), each a process of the realtools test server, on
// a real hub; github's search_repositories, which every set-up has, is
// auto-approved.
type toolCount struct {
	hub *hub.Hub
	n   int
}

func newToolCount(tb testing.TB, n int) *toolCount {
	tb.Helper()
	servers := map[string]any{}
	for _, s := range realtools.Take(n) {
		servers[s.Name] = testenv.RealToolsEntry(tb, s.Source, len(s.Tools), "search_repositories")
	}
	h := testenv.StartHub(tb, testenv.WriteSettings(tb, tb.TempDir(), servers), hub.Options{NoWatch: true})
	testenv.Running(tb, h)
	return &toolCount{hub: h, n: n}
}

// findRepos is the model of a toolCount turn: it searches for the tool
// where it is shown search_tools, calls it, and answers.
func findRepos(c llmfake.Call) llmfake.Reply {
	r := c.Request
	last := ""
	if len(r.Messages) > 2 { // after the system prompt and the user's message
		last = read(r)
	}
	switch {
	case strings.Contains(last, "[use_mcp_tool"):
		return llmfake.Text(complete("Found them."))
	case strings.Contains(last, "[search_tools"):
		return llmfake.Text(useTool("github", "search_repositories", `{"query": "telegram bot language:go"}`))
	case strings.Contains(r.Messages[0].Content, "search_tools"):
		return llmfake.Text(searchFor("search repositories on github"))
	}
	return llmfake.Text(useTool("github", "search_repositories", `{"query": "telegram bot language:go"}`))
}

// turn runs one turn of findRepos in chat and returns the bytes sent to
// the model on each of its calls.
func (tc *toolCount) turn(tb testing.TB, a *agent.Agent, srv *llmfake.Server, chat string) []int {
	tb.Helper()
	before := len(srv.Calls())
	var last agent.Event
	if err := a.Turn(context.Background(), agent.Request{Caller: mcpgram.Caller{UserID: "1", ChatID: chat}, Text: "find telegram bots written in go"},
		func(ev agent.Event) { last = ev }); err != nil || last.Kind != agent.EventAnswer {
		tb.Fatalf("turn: %v, %+v", err, last)
	}
	var sizes []int
	for _, c := range srv.Calls()[before:] {
		sizes = append(sizes, c.Request.Bytes)
	}
	return sizes
}

// agentFor is an agent over tc's hub calling tools as calling says,
// searching past search (mcpgram.ToolSearch), on a model speaking HTTP.
func (tc *toolCount) agentFor(tb testing.TB, calling mcpgram.ToolCalling, search mcpgram.ToolSearch) (*agent.Agent, *llmfake.Server) {
	tb.Helper()
	srv := llmfake.New(tb, llmfake.Native(findRepos))
	db := testenv.SQLite(tb, "")
	client, err := llm.New(mcpgram.Profile{Name: "default", BaseURL: srv.URL(), Model: "fake", ContextTokens: 32000, ToolCalling: calling, ToolSearch: search}, llm.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	a, err := agent.New(db, tc.hub, []agent.Model{client}, agent.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return a, srv
}

func total(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestToolSearchCost: with 300 tools connected, a turn that searches
// sends the model at most a quarter of what listing every tool sends,
// per call and over the turn, in XML and natively.
func TestToolSearchCost(t *testing.T) {
	t.Parallel()
	tc := newToolCount(t, 300)
	for _, calling := range []mcpgram.ToolCalling{mcpgram.ToolCallingXML, mcpgram.ToolCallingNative} {
		t.Run(string(calling), func(t *testing.T) {
			all, srvAll := tc.agentFor(t, calling, "off")
			found, srvFound := tc.agentFor(t, calling, mcpgram.DefaultToolSearch)
			listed, searched := tc.turn(t, all, srvAll, "a"), tc.turn(t, found, srvFound, "b")
			if len(listed) != 2 || len(searched) != 3 {
				t.Fatalf("%d and %d model calls, want 2 listing every tool and 3 searching", len(listed), len(searched))
			}
			perCallAll, perCall := total(listed)/len(listed), total(searched)/len(searched)
			t.Logf("%s, 300 tools: listing all %d bytes a call (%d a turn), searching %d (%d): %.1f%%",
				calling, perCallAll, total(listed), perCall, total(searched), 100*float64(perCall)/float64(perCallAll))
			if perCall*4 > perCallAll || total(searched)*4 > total(listed) {
				t.Errorf("searching sends %d bytes a call, %d a turn; want at most a quarter of %d and %d", perCall, total(searched), perCallAll, total(listed))
			}
		})
	}
}

// BenchmarkToolCount measures what a turn sends the model (the body of
// each request, as the llm client sends it) with 10, 50, 100, 300 and
// 1,000 tools connected, in XML and natively, listing every tool
// (search=off) and searching for them (search=0, always): chars per
// call and per turn, and tokens as mcpgram estimates them (4 bytes a
// token). A searching turn makes three calls (search, call, answer), a
// listing one two (call, answer).
func BenchmarkToolCount(b *testing.B) {
	for _, n := range []int{10, 50, 100, 300, 1000} {
		tc := newToolCount(b, n)
		for _, calling := range []mcpgram.ToolCalling{mcpgram.ToolCallingXML, mcpgram.ToolCallingNative} {
			for _, search := range []mcpgram.ToolSearch{"off", "0"} {
				b.Run(fmt.Sprintf("tools=%d/tool-calling=%s/search=%s", n, calling, search), func(b *testing.B) {
					a, srv := tc.agentFor(b, calling, search)
					var calls, bytes int
					for i := 0; b.Loop(); i++ {
						sizes := tc.turn(b, a, srv, fmt.Sprint(i))
						calls += len(sizes)
						bytes += total(sizes)
					}
					turns := float64(b.N)
					b.ReportMetric(float64(bytes)/float64(calls), "chars/call")
					b.ReportMetric(float64(bytes)/float64(calls)/4, "tokens/call")
					b.ReportMetric(float64(bytes)/turns, "chars/turn")
				})
			}
		}
	}
}
