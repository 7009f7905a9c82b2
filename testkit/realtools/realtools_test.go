package realtools_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/realtools"
)

// TestFile reads the whole file: every server says what it is for, every
// tool has a description and a valid object schema, and names are unique
// per server.
func TestFile(t *testing.T) {
	servers := realtools.Servers()
	if n := realtools.Count(); n < 200 || len(servers) < 10 {
		t.Fatalf("%d tools of %d servers: want at least 200 of 10", n, len(servers))
	}
	for _, s := range servers {
		if s.About == "" || len(s.Tools) == 0 {
			t.Errorf("server %s: about %q, %d tools", s.Name, s.About, len(s.Tools))
		}
		seen := map[string]bool{}
		for _, tool := range s.Tools {
			if seen[tool.Name] || tool.Description == "" {
				t.Errorf("%s/%s: twice, or no description", s.Name, tool.Name)
			}
			seen[tool.Name] = true
			var schema struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
				t.Errorf("%s/%s: schema %s: %v", s.Name, tool.Name, tool.InputSchema, err)
			}
		}
	}
}

func TestTake(t *testing.T) {
	for _, n := range []int{0, 1, 10, 300, 1000} {
		got := 0
		names := map[string]bool{}
		for _, s := range realtools.Take(n) {
			if names[s.Name] {
				t.Errorf("Take(%d): server %s twice", n, s.Name)
			}
			names[s.Name] = true
			got += len(s.Tools)
		}
		if got != n {
			t.Errorf("Take(%d) holds %d tools", n, got)
		}
	}
	if s := realtools.Take(realtools.Count() + 1); s[len(s)-1].Name != "github-2" {
		t.Errorf("past the file: last server %s, want github-2", s[len(s)-1].Name)
	}
}
