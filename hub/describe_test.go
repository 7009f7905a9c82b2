package hub_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
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

// TestServerTitle: the catalog carries the title a server gives itself
// (serverInfo.title), on either revision, on one line of at most
// hub.MaxTitle characters; a server whose title is its name has none.
func TestServerTitle(t *testing.T) {
	t.Parallel()
	withTitle := func(legacy bool, title string) map[string]any {
		e := testenv.FeaturesEntry(t, legacy)
		e["env"] = map[string]string{"FEATURES_TITLE": title}
		return e
	}
	long := strings.Repeat("Tïtle ", 100)
	h, _ := startHub(t, map[string]any{
		"modern":  testenv.FeaturesEntry(t, false),
		"legacy":  testenv.FeaturesEntry(t, true),
		"hostile": withTitle(false, "Line one\n\tline two\r\n"+long),
		"f":       withTitle(false, "f"),
		"echo":    echoServer(t, nil),
	})
	for _, name := range []string{"modern", "legacy"} {
		if got := server(t, h, name).Title; got != "Features Test Server" {
			t.Errorf("%s: title = %q, want %q", name, got, "Features Test Server")
		}
	}
	got := server(t, h, "hostile").Title
	if strings.ContainsAny(got, "\n\r\t") || utf8.RuneCountInString(got) != hub.MaxTitle || !strings.HasPrefix(got, "Line one line two Tïtle") || !strings.HasSuffix(got, "…") {
		t.Errorf("hostile title = %q (%d characters), want one line cut to %d", got, utf8.RuneCountInString(got), hub.MaxTitle)
	}
	for _, name := range []string{"f", "echo"} {
		if got := server(t, h, name).Title; got != "" {
			t.Errorf("%s: title = %q, want none", name, got)
		}
	}
}
