package hub_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/internal/testenv"
)

// TestServerDescriptionAndToolTitles: the catalog carries what a server
// says it is for (its description, else the first sentence of its
// instructions) and each tool's title, which the tool search reads.
func TestServerDescriptionAndToolTitles(t *testing.T) {
	t.Parallel()
	described := testenv.RealToolsEntry(t, "github", 3)
	instructed := testenv.RealToolsEntry(t, "github", 1)
	instructed["args"] = append(instructed["args"].([]string), "-instructions")
	h, _ := startHub(t, map[string]any{"described": described, "instructed": instructed, "echo": echoServer(t, nil)})

	const about = "GitHub's API: repositories, files, branches, issues, pull requests, Actions, security alerts and notifications."
	if got := server(t, h, "described").Description; got != about {
		t.Errorf("description = %q, want %q", got, about)
	}
	if got := server(t, h, "instructed").Description; got != about {
		t.Errorf("from instructions: %q, want their first sentence %q", got, about)
	}
	if got := server(t, h, "echo").Description; got != "" {
		t.Errorf("a server that says nothing: %q", got)
	}
	s := server(t, h, "described")
	if len(s.Tools) != 3 {
		t.Fatalf("%d tools, want the first 3", len(s.Tools))
	}
	if tool, _ := s.Tool("search_repositories"); tool.Title != "Search repositories" {
		t.Errorf("title = %q, want %q", tool.Title, "Search repositories")
	}
}
