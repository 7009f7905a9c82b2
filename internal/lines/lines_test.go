package lines_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/internal/lines"
)

func TestFirst(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"  padded  ", "padded"},
		{"first\nsecond", "first"},
		{"\n\n  after blank lines \nmore", "after blank lines"},
		{"windows\r\nline", "windows"},
	}
	for _, tt := range tests {
		if got := lines.First(tt.in); got != tt.want {
			t.Errorf("First(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPosition(t *testing.T) {
	const text = "ab\ncd\n\nxyz"
	tests := []struct {
		off       int64
		line, col int
	}{
		{-5, 1, 1},
		{0, 1, 1},
		{1, 1, 2},
		{2, 1, 3}, // the newline ends its own line
		{3, 2, 1},
		{6, 3, 1},
		{7, 4, 1},
		{9, 4, 3},
		{10, 4, 4}, // the end of the text: after its last byte
		{99, 4, 4},
	}
	for _, tt := range tests {
		line, col := lines.Position(text, tt.off)
		if line != tt.line || col != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
		if bl, bc := lines.Position([]byte(text), tt.off); bl != line || bc != col {
			t.Errorf("Position([]byte, %d) = %d:%d, string gives %d:%d", tt.off, bl, bc, line, col)
		}
	}
}

func TestFence(t *testing.T) {
	for body, want := range map[string]string{
		"":                   "```",
		"plain":              "```",
		"a `b` c":            "```",
		"```go\nx\n```":      "````",
		"`````` and ```":     "```````",
		"ends in backtick `": "```",
	} {
		if got := lines.Fence(body); got != want {
			t.Errorf("Fence(%q) = %q, want %q", body, got, want)
		}
	}
}
