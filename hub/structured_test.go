package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
)

// A tool's structured content comes with its result; content that breaks
// the tool's output schema, or none from a tool that declares one, is an
// ErrBadResult saying what is wrong.
func TestStructuredContentAgainstTheOutputSchema(t *testing.T) {
	h := elicitHub(t, nil, false, nil)
	caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
	s, _ := h.Catalog().Server("f")
	tool, _ := s.Tool("weather")
	if tool.Title != "Today's weather" || !strings.Contains(string(tool.OutputSchema), `"required":["temperature","conditions"]`) {
		t.Errorf("tool = %+v, want its title and output schema", tool)
	}
	res, err := h.CallTool(context.Background(), caller, "f", "weather", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Structured) != `{"conditions":"sunny","temperature":21.5}` {
		t.Errorf("structured = %s", res.Structured)
	}
	for _, tt := range []struct{ args, want string }{
		{"broken", "at /temperature: got string, want number"},
		{"missing", "it returned no structured content"},
	} {
		_, err := h.CallTool(context.Background(), caller, "f", "weather", map[string]any{tt.args: true})
		if !errors.Is(err, hub.ErrBadResult) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrBadResult saying %q", tt.args, err, tt.want)
		}
	}
	// A tool that declares no schema has its structured content unchecked.
	res, err = h.CallTool(context.Background(), caller, "f", "forecast", nil)
	if err != nil || string(res.Structured) != `{"high":24,"low":12}` {
		t.Errorf("forecast: %+v, %v", res, err)
	}
}
