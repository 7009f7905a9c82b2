package executor_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/toolcall"
)

func TestCheckSearch(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	cat := testCatalog()
	tests := []struct {
		name    string
		in      string
		want    executor.Call
		problem executor.Problem
	}{
		{"query", "<search_tools><query>sum two numbers</query></search_tools>",
			executor.Call{Name: toolcall.SearchTools, Query: "sum two numbers"}, ""},
		{"query and server", "<search_tools><query>notes</query><server_name>notes</server_name></search_tools>",
			executor.Call{Name: toolcall.SearchTools, Query: "notes", Server: "notes"}, ""},
		{"server in another case", "<search_tools><query>notes</query><server_name>Notes</server_name></search_tools>",
			executor.Call{Name: toolcall.SearchTools, Query: "notes", Server: "notes", Repairs: []string{executor.RepairNameCase}}, ""},
		{"no query", "<search_tools><server_name>notes</server_name></search_tools>", executor.Call{}, executor.ProblemMissingParam},
		{"unknown server", "<search_tools><query>x</query><server_name>nope</server_name></search_tools>", executor.Call{}, executor.ProblemUnknownServer},
		{"failed server", "<search_tools><query>x</query><server_name>broken</server_name></search_tools>", executor.Call{}, executor.ProblemUnknownServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ex.Check(cat, onlyBlock(t, tt.in))
			if p := executor.ProblemOf(err); p != tt.problem {
				t.Fatalf("problem %q (%v), want %q", p, err, tt.problem)
			}
			if err != nil {
				return
			}
			if got.Name != tt.want.Name || got.Query != tt.want.Query || got.Server != tt.want.Server || !slices.Equal(got.Repairs, tt.want.Repairs) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPrepareSearchNeedsNoApproval: a search only reads the catalog, so
// it runs beside the calls of its reply without asking anyone.
func TestPrepareSearchNeedsNoApproval(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	r := toolcall.Parse("<search_tools><query>echo</query></search_tools>\n" + tool("notes", "add_note", "{}"))
	p := ex.Prepare(testCatalog(), r, false)
	if p.Action != executor.ActRun || len(p.Steps) != 2 {
		t.Fatalf("plan %+v, want two steps to run", p)
	}
	if s := p.Steps[0]; s.Err != nil || s.Approve || s.Consent || s.Call.Name != toolcall.SearchTools {
		t.Errorf("search step %+v, want checked, no approval", s)
	}
	if !p.Steps[1].Approve {
		t.Errorf("the tool call beside it still needs its approval")
	}
}

func TestSearch(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	cat := realtools.Catalog(realtools.Servers())
	names := func(c executor.Call) []string {
		var out []string
		for _, h := range ex.Search(cat, c) {
			out = append(out, h.Server+"/"+h.Tool.Name)
		}
		return out
	}
	got := names(executor.Call{Name: toolcall.SearchTools, Query: "post a message to a slack channel"})
	if len(got) == 0 || len(got) > executor.SearchLimit || got[0] != "slack/slack_post_message" {
		t.Errorf("hits %q, want slack_post_message first, at most %d", got, executor.SearchLimit)
	}
	got = names(executor.Call{Name: toolcall.SearchTools, Query: "create an issue", Server: "github"})
	for _, g := range got {
		if !strings.HasPrefix(g, "github/") {
			t.Errorf("hit %s outside the server searched", g)
		}
	}
	// A chat that turned a server off does not find its tools, even with
	// an index of the full catalog built first for the same version.
	narrowed := cat
	narrowed.Servers = slices.Clone(cat.Servers)
	for i, s := range narrowed.Servers {
		if s.Name == "slack" {
			narrowed.Servers[i].Status, narrowed.Servers[i].Tools = mcpgram.StatusDisabled, nil
		}
	}
	if got := names(executor.Call{Name: toolcall.SearchTools, Query: "post a message to a slack channel"}); got[0] != "slack/slack_post_message" {
		t.Fatalf("full catalog: %q", got)
	}
	for _, h := range ex.Search(narrowed, executor.Call{Name: toolcall.SearchTools, Query: "post a message to a slack channel"}) {
		if h.Server == "slack" {
			t.Errorf("narrowed catalog found %s/%s", h.Server, h.Tool.Name)
		}
	}
}

// TestPrepareSearchingSuggests: a model shown only some tools that names
// one the catalog does not have hears what a search for the name finds.
func TestPrepareSearchingSuggests(t *testing.T) {
	ex := executor.New(nil, executor.Options{})
	cat := realtools.Catalog(realtools.Servers())
	feedback := func(reply string, searching bool) string {
		p := ex.PrepareWith(cat, toolcall.Parse(reply), executor.PrepareOptions{Searching: searching})
		if len(p.Steps) != 1 || p.Steps[0].Err == nil {
			t.Fatalf("plan %+v, want one refused step", p)
		}
		return p.Steps[0].Feedback
	}
	near := tool("github", "create_issues", `{}`)
	got := feedback(near, true)
	for _, want := range []string{`Server "github" has no tool "create_issues"; did you mean "create_issue"?`,
		`Tools whose names or descriptions match it: github__create_issue (tool "create_issue" on server "github")`, "use search_tools"} {
		if !strings.Contains(got, want) {
			t.Errorf("feedback lacks %q:\n%s", want, got)
		}
	}
	// Its tools are listed, at most 30 of them.
	if !strings.Contains(got, "and 35 more.") {
		t.Errorf("feedback lists too many, or too few, of github's 65 tools:\n%s", got)
	}
	if got := feedback(near, false); strings.Contains(got, "search_tools") {
		t.Errorf("listing every tool, feedback speaks of search:\n%s", got)
	}
	if got := feedback(tool("weather", "forecast", `{}`), true); !strings.Contains(got, "No tool matches that name; search_tools finds tools by what they do.") {
		t.Errorf("no match:\n%s", got)
	}
}
