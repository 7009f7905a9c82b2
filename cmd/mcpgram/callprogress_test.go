package main_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

var progressLineSyntax = regexp.MustCompile(`^  … index on f: \d+%, \S+ of 300 · indexing$`)

// mcp call writes what a server reports of the call's progress to
// stderr, a line a report, and at most one line a second
// (agent.DefaultProgressInterval, the chat's pace) however fast the
// server reports; stdout is the result alone.
func TestMCPCallProgress(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"f": testenv.FeaturesEntry(t, false)})
	began := time.Now()
	out, errOut, code := b.run(nil, "--mcp-settings", settings, "mcp", "call", "f", "index",
		`{"flood": 2000, "spread_ms": 2000, "count": 3, "total": 300, "message": "indexing"}`)
	elapsed := time.Since(began)
	if code != 0 || strings.TrimSpace(out) != "indexed 3 of 300; 2003 progress notifications sent" {
		t.Fatalf("exit %d; stdout %q\nstderr: %s", code, out, errOut)
	}
	var lines []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "…") {
			lines = append(lines, l)
			if !progressLineSyntax.MatchString(l) {
				t.Errorf("progress line %q, want like %q", l, "  … index on f: 40%, 120 of 300 · indexing")
			}
		}
	}
	// The first report at once, then one an interval while the flood
	// lasts (2 s): at least two lines, and a few more than elapsed /
	// interval at most, however many reports.
	bound := int(elapsed/agent.DefaultProgressInterval) + 2
	t.Logf("2003 reports in %v: %d lines on stderr (bound %d)", elapsed.Round(time.Millisecond), len(lines), bound)
	if len(lines) < 2 || len(lines) > bound {
		t.Errorf("%d progress lines, want 2 to %d:\n%s", len(lines), bound, errOut)
	}
}
