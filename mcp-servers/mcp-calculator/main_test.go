package main_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/mcptest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func TestCalculate(t *testing.T) {
	c := mcptest.Start(t, testenv.Bundled(t, "mcp-calculator"))

	tool, ok := mcptest.Tools(t, c)["calculate"]
	if !ok {
		t.Fatal("no calculate tool")
	}
	if _, ok := tool.InputSchema.Properties["expression"]; !ok || len(tool.InputSchema.Required) != 1 || tool.InputSchema.Required[0] != "expression" {
		t.Errorf("schema = %+v, want one required property expression", tool.InputSchema)
	}

	tests := []struct {
		expression any
		want       string // the whole text, or for errors a part of it
		isError    bool
	}{
		{"25 * 48 + 120 / 4", "1230", false},
		{"(1 + 2) * 3 ^ 2", "27", false},
		{"10 / 4", "2.5", false},
		{"round(sqrt(2), 3)", "1.414", false},
		{"2 * pi", "6.28318530717959", false},
		{"1 / 0", "division by zero", true},
		{"2 +", "Cannot evaluate", true},
		{"os.Getenv(\"HOME\")", "only numbers", true},
		{"10 ^ 1000", "too large", true},
		{"", "empty", true},
		{42, "required", true},
		// expr-lang reads comments; here they are errors, not silently dropped.
		{"7 // 2 + 100", `"//" at position 3`, true},
		{"10 /* 2 */ + 1", "comments are not allowed", true},
		{"99999999999999999999 + 1", "too large for a whole number", true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(strings.ReplaceAll(anyString(tt.expression), "/", "÷")), func(t *testing.T) {
			res := mcptest.Call(t, c, "calculate", map[string]any{"expression": tt.expression}, nil)
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v, want %v (%s)", res.IsError, tt.isError, res.Text)
			}
			if tt.isError && !strings.Contains(res.Text, tt.want) || !tt.isError && res.Text != tt.want {
				t.Errorf("got %q, want %q", res.Text, tt.want)
			}
		})
	}

	if res := mcptest.Call(t, c, "calculate", map[string]any{}, nil); !res.IsError {
		t.Errorf("no expression: got %+v, want an error", res)
	}
}

func anyString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "non-string"
}
