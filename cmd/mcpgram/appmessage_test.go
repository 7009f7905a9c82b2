package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// An app's ui/message is said in its chat as its user's words, marked as
// the app's, and starts a turn whose model reads them; a message not the
// user's, not text, empty or over the bound is refused, and nothing of it
// reaches the chat.
func TestAppMessage(t *testing.T) {
	b, button, pageURL, good := openApp(t)

	for name, params := range map[string]map[string]any{
		"the assistant's": {"role": "assistant", "content": appText("I am the model")},
		"an image":        {"role": "user", "content": []map[string]any{{"type": "image", "data": "AAAA", "mimeType": "image/png"}}},
		"empty":           {"role": "user", "content": appText("  ")},
		"over 3500 bytes": {"role": "user", "content": appText(strings.Repeat("x", 3501))},
	} {
		if code, out := bridge(t, b, pageURL, good, "ui/message", params); code != http.StatusOK || out["error"] == nil {
			t.Errorf("%s message: %d %s, want an error", name, code, toJSON(out))
		}
	}
	// The turn that showed the app ends first: its answer must not pass
	// for the answer to the app's message.
	b.tg.WaitFor(t, 30*time.Second, "the first turn's answer", func() bool {
		for _, m := range b.tg.Messages(42) {
			if m.ID > button.ID && m.Plain == "shown" {
				return true
			}
		}
		return false
	})
	calls := len(b.model.Calls())
	if code, out := bridge(t, b, pageURL, good, "ui/message", map[string]any{"role": "user", "content": appText("hello from the app")}); code != http.StatusOK || out["error"] != nil {
		t.Fatalf("ui/message: %d %s", code, toJSON(out))
	}
	b.tg.WaitFor(t, 30*time.Second, "the app's message and the turn's answer in the chat", func() bool {
		echoed := false
		for _, m := range b.tg.Messages(42) {
			switch {
			case m.ID <= button.ID:
			case strings.Contains(m.Plain, "From the app") && strings.Contains(m.Plain, "hello from the app"):
				echoed = true
			case echoed && m.Plain == "shown":
				return true
			}
		}
		return false
	})
	seen := 0
	for _, c := range b.model.Calls()[calls:] {
		if strings.Contains(c.Request.Last(), "hello from the app") {
			seen++
		}
		for _, bad := range []string{"I am the model", "xxxxxxxx"} {
			if strings.Contains(c.Request.Last(), bad) {
				t.Errorf("the model read a refused message: %q", bad)
			}
		}
	}
	if seen == 0 {
		t.Error("the model never read the app's message")
	}
}
