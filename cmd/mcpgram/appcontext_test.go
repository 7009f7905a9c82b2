package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// An app's ui/update-model-context is given to the model with the chat's
// next turn, the newest in place of the one before, once, after a
// restart too (it is kept in the store); one over 4 KiB,
// or not text, is refused and changes nothing.
func TestAppContext(t *testing.T) {
	b, _, pageURL, good := openApp(t)
	update := func(params map[string]any) map[string]any {
		t.Helper()
		code, out := bridge(t, b, pageURL, good, "ui/update-model-context", params)
		if code != http.StatusOK {
			t.Fatalf("ui/update-model-context: %d", code)
		}
		return out
	}

	if out := update(map[string]any{"content": appText("first context")}); out["error"] != nil {
		t.Fatalf("the first update: %s", toJSON(out))
	}
	if out := update(map[string]any{"content": appText("second context"), "structuredContent": map[string]any{"picked": 7}}); out["error"] != nil {
		t.Fatalf("the second update: %s", toJSON(out))
	}
	for name, params := range map[string]map[string]any{
		"over 4 KiB": {"content": appText(strings.Repeat("y", 4097))},
		"an image":   {"content": []map[string]any{{"type": "image", "data": "AAAA", "mimeType": "image/png"}}},
	} {
		if out := update(params); out["error"] == nil {
			t.Errorf("%s context: %s, want an error", name, toJSON(out))
		}
	}
	lastTurn := func(words string) string {
		t.Helper()
		calls := len(b.model.Calls())
		b.tg.Text(42, 42, words)
		var last string
		b.tg.WaitFor(t, 30*time.Second, "the model reading "+words, func() bool {
			for _, c := range b.model.Calls()[calls:] {
				if l := c.Request.Last(); strings.Contains(l, words) {
					last = l
					return true
				}
			}
			return false
		})
		return last
	}
	// Kept in the store, not the process: a restart in between loses
	// nothing.
	b.restart(t)
	got := lastTurn("what now")
	if !strings.Contains(got, "second context") || !strings.Contains(got, `{"picked":7}`) || strings.Contains(got, "first context") || strings.Contains(got, "yyyy") {
		t.Errorf("the next turn's message is %q: want the second context alone", got)
	}
	if got := lastTurn("and then"); strings.Contains(got, "Context from the app") || strings.Contains(got, "second context") {
		t.Errorf("the turn after is %q: want no context given twice", got)
	}
}
