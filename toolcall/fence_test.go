package toolcall_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/toolcall"
)

const deleteCall = "<use_mcp_tool>\n<server_name>memory</server_name>\n<tool_name>memory</tool_name>\n<arguments>{\"operation\": \"delete\", \"key\": \"k\"}</arguments>\n</use_mcp_tool>"

// Which blocks stand in a code fence, whatever the split of the stream.
func TestFenced(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		fenced []bool
	}{
		{"open call", "Deleting it.\n" + deleteCall, []bool{false}},
		{"fenced call with prose", "This is what deleting a memory would look like (I am not doing it):\n```xml\n" + deleteCall + "\n```", []bool{true}},
		{"lone fenced call", "```xml\n" + deleteCall + "\n```\n", []bool{true}},
		{"opener on the block's line", "Example: ```xml" + deleteCall + "```", []bool{true}},
		{"fence closed before the call", "```go\nx := 1\n```\n" + deleteCall, []bool{false}},
		{"longer closer closes", "````\ncode\n`````\n" + deleteCall, []bool{false}},
		{"shorter closer does not", "````\ncode\n```\n" + deleteCall + "\n````", []bool{true}},
		{"closer with info does not close", "```\ncode\n```go\n" + deleteCall + "\n```", []bool{true}},
		{"closed inline code before the call", "Run `this`:\n" + deleteCall, []bool{false}},
		{"call in inline code", "Write `" + deleteCall + "` to delete.", []bool{true}},
		{"call in double-backtick inline code", "Write `` " + deleteCall + " `` to delete.", []bool{true}},
		{"inline code closed on the line before", "`a` and `b`\n" + deleteCall, []bool{false}},
		{"fence lines inside arguments count for nothing", "<use_mcp_tool><server_name>s</server_name><tool_name>t</tool_name><arguments>{\"x\": \"\\n```\\n\"}</arguments></use_mcp_tool>\n```\nstill text\n" + deleteCall, []bool{false, true}},
		{"a fence in thinking counts for nothing", "<thinking>\n```\n</thinking>\n" + deleteCall, []bool{false}},
		{"second call after the fence closed", "```\n" + deleteCall + "\n```\nand for real:\n" + deleteCall, []bool{true, false}},
		{"indented fence", "   ```xml\n" + deleteCall + "\n   ```", []bool{true}},
		{"long line of backticks and words is no fence", "``` " + strings.Repeat("word ", 20) + "\n" + deleteCall, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{len(tt.in), 1, 2, 3, 7} {
				p := toolcall.NewParser()
				for s := tt.in; s != ""; {
					k := min(n, len(s))
					p.Write(s[:k])
					s = s[k:]
				}
				r := p.Close()
				if len(r.Blocks) != len(tt.fenced) {
					t.Fatalf("split %d: %d blocks, want %d", n, len(r.Blocks), len(tt.fenced))
				}
				for i, b := range r.Blocks {
					if b.Fenced != tt.fenced[i] {
						t.Errorf("split %d: block %d Fenced = %v, want %v", n, i, b.Fenced, tt.fenced[i])
					}
				}
			}
		})
	}
}
