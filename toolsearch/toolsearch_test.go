package toolsearch_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/toolsearch"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"get_file_info", []string{"get", "file", "info"}},
		{"getFileInfo", []string{"get", "file", "info"}},
		{"API-post-search", []string{"api", "post", "search"}},
		{"APIKey parseHTTPResponse", []string{"api", "key", "parse", "http", "response"}},
		{"browser_take_screenshot2", []string{"browser", "take", "screenshot2"}},
		{"  ¿Qué hora es? 東京 ", []string{"qué", "hora", "es", "東京"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := toolsearch.Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := toolsearch.Stems("Listing the files"), []string{"list", "file"}; !slices.Equal(got, want) {
		t.Errorf("Stems = %q, want %q", got, want)
	}
}

func tool(name, desc string, args ...string) mcpgram.Tool {
	props := map[string]any{}
	for _, a := range args {
		props[a] = map[string]any{"type": "string"}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return mcpgram.Tool{Name: name, Description: desc, InputSchema: b}
}

func small() mcpgram.Catalog {
	return mcpgram.Catalog{Version: 7, Servers: []mcpgram.ServerInfo{
		{Name: "files", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
			tool("read_file", "Read a file.", "path"),
			tool("write_file", "Write a file.", "path", "content"),
		}},
		{Name: "mail", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{
			tool("send", "Send an email message.", "to", "subject"),
			tool("read_inbox", "Read the messages of the inbox."),
		}},
		{Name: "off", Status: mcpgram.StatusDisabled, Tools: []mcpgram.Tool{tool("read_secret", "Read the secret file.")}},
	}}
}

func names(hits []toolsearch.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Server+"/"+h.Tool.Name)
	}
	return out
}

func TestSearch(t *testing.T) {
	ix := toolsearch.New(small())
	if ix.Len() != 4 || ix.Version() != 7 {
		t.Fatalf("Len, Version = %d, %d; want 4, 7 (only running servers' tools)", ix.Len(), ix.Version())
	}
	tests := []struct {
		name string
		q    toolsearch.Query
		want []string
	}{
		{"best first", toolsearch.Query{Text: "write my notes to a file"}, []string{"files/write_file", "files/read_file"}},
		{"argument names count", toolsearch.Query{Text: "subject"}, []string{"mail/send"}},
		{"server names count", toolsearch.Query{Text: "mail"}, []string{"mail/send", "mail/read_inbox"}},
		{"server filter", toolsearch.Query{Text: "read", Server: "mail"}, []string{"mail/read_inbox"}},
		{"visible filter", toolsearch.Query{Text: "read", Visible: func(s string) bool { return s != "files" }}, []string{"mail/read_inbox"}},
		{"limit", toolsearch.Query{Text: "read", Limit: 1}, []string{"files/read_file"}},
		{"synonym", toolsearch.Query{Text: "save it"}, []string{"files/write_file"}},
		{"no match", toolsearch.Query{Text: "weather in Lisbon"}, nil},
		{"no words", toolsearch.Query{Text: " ?! the "}, nil},
		{"disabled servers are not searched", toolsearch.Query{Text: "secret"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(ix.Search(tt.q)); !slices.Equal(got, tt.want) {
				t.Errorf("Search(%+v) = %q, want %q", tt.q.Text, got, tt.want)
			}
		})
	}
}

// TestSearchDeterministic builds the index again and again, and searches
// with equal scores: the same hits come in the same order every time.
func TestSearchDeterministic(t *testing.T) {
	cat := realtools.Catalog(realtools.Take(1000))
	var first []string
	for i := range 5 {
		got := names(toolsearch.New(cat).Search(toolsearch.Query{Text: "create an issue", Limit: 10}))
		if i == 0 {
			first = got
			if len(got) != 10 {
				t.Fatalf("got %d hits, want 10", len(got))
			}
			continue
		}
		if !slices.Equal(got, first) {
			t.Fatalf("run %d: %q, want %q", i, got, first)
		}
	}
	// Copies of a server score the same: they come in server name order.
	if first[0] != "linear/create_issue" || first[2] != "linear-2/create_issue" || first[4] != "linear-3/create_issue" {
		t.Errorf("hits %q: want linear's create_issue first, then its copies' in order", first)
	}
}

// TestSearchHostile: any text is a query, none fails.
func TestSearchHostile(t *testing.T) {
	ix := toolsearch.New(realtools.Catalog(realtools.Servers()))
	for _, q := range []string{strings.Repeat("issue ", 100000), "\x00\xff\xfe", strings.Repeat("ü", 5000), "<search_tools>"} {
		if hits := ix.Search(toolsearch.Query{Text: q}); len(hits) > toolsearch.DefaultLimit {
			t.Errorf("%d hits, want at most %d", len(hits), toolsearch.DefaultLimit)
		}
	}
	if hits := toolsearch.New(mcpgram.Catalog{}).Search(toolsearch.Query{Text: "anything"}); hits != nil {
		t.Errorf("empty catalog: %v", hits)
	}
}

func TestTopics(t *testing.T) {
	var github []mcpgram.Tool
	for _, s := range realtools.Catalog(realtools.Servers()).Servers {
		if s.Name == "github" {
			github = s.Tools
		}
	}
	if got, want := toolsearch.Topics(github, 3), []string{"request", "pull", "issue"}; !slices.Equal(got, want) {
		t.Errorf("Topics(github) = %q, want %q", got, want)
	}
	if got := toolsearch.Topics(nil, 3); len(got) != 0 {
		t.Errorf("Topics(nil) = %q", got)
	}
}

// BenchmarkSearch is one search of a catalog of n tools (the goal is well
// under a millisecond at 1,000), and building the index (once per
// catalog version).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{100, 1000} {
		cat := realtools.Catalog(realtools.Take(n))
		ix := toolsearch.New(cat)
		b.Run("tools="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ix.Search(toolsearch.Query{Text: "send a message to the team channel on slack"})
			}
		})
		b.Run("index/tools="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				toolsearch.New(cat)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
