package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// startMode runs a bot that takes its updates by polling, or from a
// webhook, until tb ends.
func startMode(tb testing.TB, webhook bool) *harness {
	tb.Helper()
	fake := tgfake.New(tb)
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "mcpgram.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	if !webhook {
		return startBotWith(tb, fake, db, true, newFakeAgent(), newFakeHub(2), nil)
	}
	f := newFront(tb)
	h := startBotWith(tb, fake, db, true, newFakeAgent(), newFakeHub(2), webhookMode(f.URL+"/telegram"))
	f.serve(h.bot)
	return h
}

// panicked returns the log lines of h that report a recovered panic.
func panicked(h *harness) []string {
	var out []string
	for _, line := range strings.Split(h.log.String(), "\n") {
		if strings.Contains(line, " panic=") {
			out = append(out, line)
		}
	}
	return out
}

// Every update kind Telegram defines, whole and with any one field
// absent, goes through the whole bot (intake, inbox, routing, handling)
// by polling and by webhook: each is handled, and none panics anywhere.
func TestEveryUpdateKindHandled(t *testing.T) {
	var all [][]byte
	for _, k := range tgfake.Kinds {
		variants, err := tgfake.Omissions([]byte(k.Example))
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, []byte(k.Example)), variants...)
	}
	for _, mode := range []struct {
		name    string
		webhook bool
	}{{"polling", false}, {"webhook", true}} {
		t.Run(mode.name, func(t *testing.T) {
			h := startMode(t, mode.webhook)
			for _, u := range all {
				if _, err := h.fake.Raw(u); err != nil {
					t.Fatal(err)
				}
			}
			waitHandled(t, h)
			if p := panicked(h); len(p) > 0 {
				t.Errorf("%d panics while handling %d updates:\n%s", len(p), len(all), strings.Join(p, "\n"))
			}
			// The press of a button on an inline-mode message, which has
			// no chat, is answered.
			answered := false
			for _, c := range h.fake.Calls("answerCallbackQuery") {
				answered = answered || (c.Params["callback_query_id"] == "cq2" && strings.Contains(c.Params["text"], "no longer valid"))
			}
			if !answered {
				t.Error("the press of an inline-mode message's button was not answered")
			}
		})
	}
}

// Whatever update Telegram sends, the bot handles it without a panic
// anywhere, by polling and by webhook, and takes the next.
func FuzzUpdate(f *testing.F) {
	for _, k := range tgfake.Kinds {
		f.Add([]byte(k.Example), uint64(0))
		f.Add([]byte(k.Example), uint64(0b100100))
	}
	hs := []*harness{startMode(f, false), startMode(f, true)}
	f.Fuzz(func(t *testing.T, raw []byte, drop uint64) {
		u := tgfake.Drop(raw, drop)
		for _, h := range hs {
			h.log.Reset()
			if _, err := h.fake.Raw(u); err != nil {
				return // Telegram sends JSON objects; the fake sends nothing else
			}
			waitHandled(t, h)
			if p := panicked(h); len(p) > 0 {
				t.Fatalf("%s: %s", u, strings.Join(p, "\n"))
			}
		}
	})
}
