package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// appCard waits for the approval card of an app's request in chat's
// messages after skip, and returns it and its buttons' data.
func appCard(t *testing.T, tg *tgfake.Server, chat int64, skip int) (m tgfake.Message, approve, deny string) {
	t.Helper()
	tg.WaitFor(t, 30*time.Second, "an app's approval card", func() bool {
		for _, c := range tg.Messages(chat) {
			if c.ID > skip && len(c.Keyboard) > 0 && c.Keyboard[0][0].CallbackData != nil && strings.HasPrefix(*c.Keyboard[0][0].CallbackData, "w:") {
				m = c
				return true
			}
		}
		return false
	})
	return m, *m.Keyboard[0][0].CallbackData, *m.Keyboard[0][1].CallbackData
}

// toolCalls is how many calls of f's tool the bot counted, by status.
func toolCalls(t *testing.T, b *appsBot, tool, status string) float64 {
	t.Helper()
	n, _ := value(scrape(t, "http://"+b.listen), "mcpgram_tool_calls_total", map[string]string{"server": "f", "tool": tool, "status": status})
	return n
}

// An app's call of a tool the model would need approval for shows an
// approval card in the user's chat, saying the app asks; the call waits,
// not run, until the press: approved, it runs once (its approval cannot
// be used again), denied, the app hears that the user declined. A press
// by another user is refused and decides nothing. A resources/read the
// model's would need approval for waits for the same card, and while one
// request of an app waits, the app's others that need approval are
// refused, so that an app cannot flood the chat with cards.
func TestAppApproval(t *testing.T) {
	b, button, pageURL, good := openApp(t)

	asked := map[string]any{"name": "asked", "arguments": map[string]any{"x": "from the app"}}
	send := func(method string, params map[string]any) chan bridgeAnswer {
		return bridgeAsync(b.browser, pageURL, good, method, params)
	}
	call := func() chan bridgeAnswer { return send("tools/call", asked) }
	approved := call()
	card, yes, _ := appCard(t, b.tg, 42, button.ID)
	if !strings.Contains(card.Plain, "app") || !strings.Contains(card.Plain, "asked") || !strings.Contains(card.Plain, "from the app") {
		t.Errorf("the card says %q: want the app, the tool and its arguments", card.Plain)
	}
	if n := toolCalls(t, b, "asked", "ok"); n != 0 {
		t.Fatalf("asked ran %v times before the press", n)
	}
	if id := b.tg.Press(42, 43, card.ID, yes); !strings.Contains(answerOf(t, b.tg, id), "Only the person") {
		t.Errorf("Bob's press answered %q", answerOf(t, b.tg, id))
	}
	b.tg.Press(42, 42, card.ID, yes)
	got := <-approved
	if got.code != http.StatusOK || !strings.Contains(toJSON(got.out["result"]), "asked ran") {
		t.Fatalf("the approved call: %d %s", got.code, toJSON(got.out))
	}
	pending := strings.Split(yes, ":")[1]
	if code, out := bridge(t, b, pageURL, good, "mcpgram/await", map[string]any{"pending": atoi(t, pending)}); code != http.StatusOK || !strings.Contains(toJSON(out), "was used") {
		t.Errorf("the approval asked again: %d %s, want it used", code, toJSON(out))
	}
	if n := toolCalls(t, b, "asked", "ok"); n != 1 {
		t.Errorf("asked ran %v times, want once", n)
	}

	denied := call()
	card, _, no := appCard(t, b.tg, 42, card.ID)
	b.tg.Press(42, 42, card.ID, no)
	got = <-denied
	if got.code != http.StatusOK || !strings.Contains(toJSON(got.out["error"]), "the user declined") {
		t.Errorf("the denied call: %d %s, want the user declined", got.code, toJSON(got.out))
	}
	if n := toolCalls(t, b, "asked", "ok"); n != 1 {
		t.Errorf("asked ran %v times after the denial, want once", n)
	}

	// A read the model's would need approval for; meanwhile the app can
	// ask nothing else that needs one.
	read := send("resources/read", map[string]any{"uri": "features://report/notes.txt"})
	card, yes, _ = appCard(t, b.tg, 42, card.ID)
	if !strings.Contains(card.Plain, "features://report/notes.txt") {
		t.Errorf("the read's card says %q", card.Plain)
	}
	if code, out := bridge(t, b, pageURL, good, "tools/call", asked); code != http.StatusOK || !strings.Contains(toJSON(out["error"]), "waits for approval") {
		t.Errorf("a second request while one waits: %d %s, want it refused", code, toJSON(out))
	}
	b.tg.Press(42, 42, card.ID, yes)
	if got := <-read; got.code != http.StatusOK || !strings.Contains(toJSON(got.out["result"]), "Notes of the report") {
		t.Errorf("the approved read: %d %s", got.code, toJSON(got.out))
	}
	if m := b.tg.Messages(42); len(m) > 0 && m[len(m)-1].ID != card.ID && len(m[len(m)-1].Keyboard) > 0 {
		t.Errorf("a card after the refused request: %q", m[len(m)-1].Plain)
	}
}

// answerOf waits for the bot's answer to callback query id.
func answerOf(t *testing.T, tg *tgfake.Server, id string) string {
	t.Helper()
	var a tgfake.CallbackAnswer
	tg.WaitFor(t, 30*time.Second, "the press's answer", func() bool {
		var ok bool
		a, ok = tg.Answer(id)
		return ok
	})
	return a.Text
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is no number", s)
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
