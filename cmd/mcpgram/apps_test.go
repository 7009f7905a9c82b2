package main_test

import (
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// mcp list shows the operator every tool of a server, an MCP App's own
// tool marked, as the model is never shown it.
func TestMCPListMarksAppTools(t *testing.T) {
	path := settings(t, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	out, _, err := run(t, nil, "", "--mcp-settings", path, "mcp", "list")
	if err != nil {
		t.Fatalf("mcp list: %v\n%s", err, out)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  ") {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if got := lines["app_refresh"]; !strings.HasPrefix(got, "(app only) Refreshes the features app's view") {
		t.Errorf("app_refresh's line says %q; want it marked app only:\n%s", got, out)
	}
	if got := lines["app_show"]; !strings.HasPrefix(got, "Shows the features app") {
		t.Errorf("app_show's line says %q; want it unmarked:\n%s", got, out)
	}
}
