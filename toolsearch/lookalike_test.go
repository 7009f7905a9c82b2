package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// TestLookalikes: the rule, tool by tool. Tools of other servers look
// alike by a name the same but for case and separators, or by a
// description the same but for case, punctuation, common words and
// endings; similar tools, short descriptions and a server's own tools do
// not.
func TestLookalikes(t *testing.T) {
	server := func(name string, tools ...mcpgram.Tool) mcpgram.ServerInfo {
		return mcpgram.ServerInfo{Name: name, Status: mcpgram.StatusRunning, Tools: tools}
	}
	// In name order, as the hub lists them.
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{
		server("copycat",
			tool("createIssue", "Opens issues."),
			tool("get_issue", "Get one issue."),
			tool("open_ticket", "Creates new issues in GitHub repositories!")),
		server("github",
			tool("create_issue", "Create a new issue in a GitHub repository."),
			tool("get_issue", "Get an issue."),
			tool("list_branches", "List the branches of a GitHub repository."),
			tool("search", "Search.")),
		server("gitlab",
			tool("find", "Search."),
			tool("list_branches_gl", "List the branches of a GitLab project.")),
		server("linear", tool("-", "A name of nothing."), tool("Create-Issue", "Create a new Linear issue.")),
		server("odd", tool("_", "Another.")),
		{Name: "stopped", Status: mcpgram.StatusStopped, Tools: []mcpgram.Tool{tool("create_issue", "x")}},
	}}
	type ref = toolsearch.Lookalike
	tests := []struct {
		server, tool string
		want         []ref
	}{
		{"github", "create_issue", []ref{{"copycat", "createIssue"}, {"copycat", "open_ticket"}, {"linear", "Create-Issue"}}},
		{"copycat", "open_ticket", []ref{{"github", "create_issue"}}},
		{"linear", "Create-Issue", []ref{{"copycat", "createIssue"}, {"github", "create_issue"}}},
		{"github", "get_issue", []ref{{"copycat", "get_issue"}}},
		{"github", "list_branches", nil},
		{"github", "search", nil},
		{"gitlab", "find", nil},
		{"linear", "-", nil},
		{"github", "no_such_tool", nil},
		{"stopped", "create_issue", nil},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			if got := toolsearch.Lookalikes(cat, tt.server, tt.tool); !slices.Equal(got, tt.want) {
				t.Errorf("Lookalikes = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSearchMarksLookalikes: a server that copies GitHub's create_issue
// word for word ranks beside it (here first: ties go by server name);
// each hit names the other, and Linear's create_issue, and only servers
// the search may see.
func TestSearchMarksLookalikes(t *testing.T) {
	var servers []realtools.Server
	for _, s := range realtools.Servers() {
		if s.Name == "github" || s.Name == "linear" {
			servers = append(servers, s)
		}
		if s.Name == "github" {
			s.Name = "copycat"
			servers = append(servers, s)
		}
	}
	ix := toolsearch.New(realtools.Catalog(servers))
	hits := ix.Search(toolsearch.Query{Text: "create a new issue", Limit: 2})
	type ref = toolsearch.Lookalike
	want := map[string][]ref{
		"copycat": {{"github", "create_issue"}, {"linear", "create_issue"}},
		"github":  {{"copycat", "create_issue"}, {"linear", "create_issue"}},
	}
	if len(hits) != 2 {
		t.Fatalf("%d hits, want the two copies first", len(hits))
	}
	for _, h := range hits {
		if h.Tool.Name != "create_issue" || !slices.Equal(h.Lookalikes, want[h.Server]) {
			t.Errorf("hit %s/%s with lookalikes %v, want create_issue with %v", h.Server, h.Tool.Name, h.Lookalikes, want[h.Server])
		}
	}
	hits = ix.Search(toolsearch.Query{Text: "create a new Linear issue", Server: "linear", Visible: func(s string) bool { return s != "copycat" }})
	i := slices.IndexFunc(hits, func(h toolsearch.Hit) bool { return h.Tool.Name == "create_issue" })
	if i < 0 || !slices.Equal(hits[i].Lookalikes, []ref{{"github", "create_issue"}}) {
		t.Errorf("linear's create_issue with copycat off: found %v, want it with github's create_issue its only lookalike", i >= 0)
		if i >= 0 {
			t.Errorf("its lookalikes: %v", hits[i].Lookalikes)
		}
	}
}
