package suggest_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/internal/suggest"
)

func TestClosest(t *testing.T) {
	known := []string{"openai_model", "max_turns", "everything", "echo"}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"opneai_model", "openai_model", true},
		{"MAX_TURNS", "max_turns", true},
		{"evrything", "everything", true},
		{"ecko", "echo", true},
		{"favourite_colour", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got, ok := suggest.Closest(tt.name, known); got != tt.want || ok != tt.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	if d := suggest.Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}

// A word of another level is found by the last word of its path.
func TestClosestPath(t *testing.T) {
	paths := []string{"run", "mcp list", "mcp login", "mcp logout", "mcp call", "config"}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"list", "mcp list", true},
		{"lst", "mcp list", true},
		{"logot", "mcp logout", true},
		{"confg", "config", true},
		{"fly", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := suggest.ClosestPath(tt.name, paths); got != tt.want || ok != tt.ok {
				t.Errorf("ClosestPath(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}
