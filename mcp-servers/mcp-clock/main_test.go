package main_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/mcptest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

func TestClock(t *testing.T) {
	c := mcptest.Start(t, testenv.Bundled(t, "mcp-clock"), "ZONEINFO=/nonexistent")

	tools := mcptest.Tools(t, c)
	for _, name := range []string{"current_time", "convert_time"} {
		if _, ok := tools[name]; !ok {
			t.Errorf("no %s tool", name)
		}
	}

	t.Run("current time", func(t *testing.T) {
		before := time.Now().Add(-time.Second)
		res := mcptest.Call(t, c, "current_time", map[string]any{"timezone": "Asia/Kolkata"}, nil)
		if res.IsError {
			t.Fatal(res.Text)
		}
		line := lineAfter(res.Text, "RFC 3339: ")
		got, err := time.Parse(time.RFC3339, line)
		if err != nil {
			t.Fatalf("RFC 3339 line %q: %v\n%s", line, err, res.Text)
		}
		if got.Before(before.Truncate(time.Second)) || got.After(time.Now().Add(time.Second)) {
			t.Errorf("current time %v, want about %v", got, before)
		}
		if _, off := got.Zone(); off != 5*3600+1800 {
			t.Errorf("offset %d s, want +05:30", off)
		}
		if wd := lineAfter(res.Text, "Weekday: "); wd != got.Weekday().String() {
			t.Errorf("weekday %q, want %q", wd, got.Weekday())
		}
	})

	t.Run("default UTC", func(t *testing.T) {
		res := mcptest.Call(t, c, "current_time", map[string]any{}, nil)
		if res.IsError || !strings.Contains(res.Text, "Time zone: UTC") {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("convert", func(t *testing.T) {
		res := mcptest.Call(t, c, "convert_time", map[string]any{
			"time": "2026-11-21 15:04", "from_timezone": "America/New_York", "to_timezone": "Europe/Berlin",
		}, nil)
		if res.IsError || !strings.Contains(res.Text, "is Saturday 2026-11-21 21:04 in Europe/Berlin (CET, UTC+01:00)") {
			t.Errorf("got %+v", res)
		}
		res = mcptest.Call(t, c, "convert_time", map[string]any{"time": "2026-07-01T12:00:00+02:00", "to_timezone": "Asia/Tokyo"}, nil)
		if res.IsError || !strings.Contains(res.Text, "is Wednesday 2026-07-01 19:00 in Asia/Tokyo") {
			t.Errorf("got %+v", res)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"time": "12:00", "from_timezone": "Mars/Olympus", "to_timezone": "UTC"},
			{"time": "12:00", "to_timezone": "Atlantis"},
		} {
			res := mcptest.Call(t, c, "convert_time", args, nil)
			if !res.IsError || !strings.Contains(res.Text, "Unknown time zone") || !strings.Contains(res.Text, "Europe/Berlin") {
				t.Errorf("convert %v = %+v, want an unknown zone error with an example", args, res)
			}
		}
		if res := mcptest.Call(t, c, "current_time", map[string]any{"timezone": "Mars/Olympus"}, nil); !res.IsError || !strings.Contains(res.Text, `"Mars/Olympus"`) {
			t.Errorf("current_time Mars = %+v", res)
		}
		if res := mcptest.Call(t, c, "convert_time", map[string]any{"time": "soon", "to_timezone": "UTC"}, nil); !res.IsError {
			t.Errorf("convert soon = %+v, want an error", res)
		}
		if res := mcptest.Call(t, c, "convert_time", map[string]any{"time": "12:00"}, nil); !res.IsError || !strings.Contains(res.Text, "to_timezone") {
			t.Errorf("convert without to_timezone = %+v", res)
		}
	})
}

// Minimal images have no /usr/share/zoneinfo, so the binary must carry the
// zone database itself.
func TestClockEmbedsZoneDatabase(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./mcp-servers/mcp-clock")
	cmd.Dir = testenv.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if !slices.Contains(strings.Fields(string(out)), "time/tzdata") {
		t.Error("mcp-clock does not import time/tzdata")
	}
}

func lineAfter(text, prefix string) string {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
