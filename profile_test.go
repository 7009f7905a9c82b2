package mcpgram_test

import (
	"testing"

	"github.com/mcpgram/mcpgram"
)

func TestToolSearch(t *testing.T) {
	tests := []struct {
		t                           mcpgram.ToolSearch
		tools, listTokens, contextT int
		want                        bool
	}{
		{"", 50, 3199, 32000, false},
		{"", 50, 3201, 32000, true},
		{"", 50, 3201, 0, true}, // no budget: a share of 32000
		{"10%", 300, 3000, 8000, true},
		{"100%", 300, 8000, 8000, false},
		{"40", 40, 1 << 30, 1000, false},
		{"40", 41, 10, 1000, true},
		{"0", 1, 0, 1000, true},
		{"0", 0, 0, 1000, false},
		{"off", 10000, 1 << 30, 1000, false},
		{" OFF ", 10000, 1 << 30, 1000, false},
		{"5 %", 10, 51, 1000, true},
	}
	for _, tt := range tests {
		if err := tt.t.Check(); err != nil {
			t.Errorf("Check(%q): %v", tt.t, err)
		}
		if got := tt.t.Searches(tt.tools, tt.listTokens, tt.contextT); got != tt.want {
			t.Errorf("%q.Searches(%d tools, %d tokens, budget %d) = %v, want %v", tt.t, tt.tools, tt.listTokens, tt.contextT, got, tt.want)
		}
	}
	for _, bad := range []mcpgram.ToolSearch{"-1", "0%", "101%", "ten", "10%%", "1.5"} {
		if err := bad.Check(); err == nil {
			t.Errorf("Check(%q) = nil, want an error", bad)
		}
		if bad.Searches(1000, 1<<30, 1000) {
			t.Errorf("%q searches; a malformed threshold lists every tool", bad)
		}
	}
}
