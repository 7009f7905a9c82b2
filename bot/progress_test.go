package bot_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// newProgressStack is the stack with the test server
// hub/testdata/features as "f", its progress tools and slow resource
// auto-approved, the agent reporting progress every interval.
func newProgressStack(t testing.TB, interval time.Duration) *stack {
	t.Helper()
	s := newServersStack(t, map[string]any{"f": testenv.FeaturesEntry(t, false, "index", "wait", "cancelled", "resource:features://slow/wait")}, formModel, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, func(_ *mcpgram.Profile, o *agent.Options) { o.ProgressInterval = interval })
	return s
}

// statusOf waits until chat has a status message showing want, and
// returns it.
func statusOf(t testing.TB, fake *tgfake.Server, chat int64, want string) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	fake.WaitFor(t, 30*time.Second, "a status message showing "+want, func() bool {
		m, ok := lastWith(fake, chat, want)
		got = m
		return ok
	})
	return got
}

// waitCancelled waits until the features server has counted n calls of
// wait cancelled.
func waitCancelled(t testing.TB, h *hub.Hub, n string) {
	t.Helper()
	for {
		res, err := h.CallTool(context.Background(), mcpgram.Caller{UserID: "t", ChatID: "t"}, "f", "cancelled", nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text(), `"cancelled":`+n+"}") {
			return
		}
	}
}

// A running call's progress shows on the status message, with a Stop
// button that only the turn's user may press, in a group too: it cancels
// the call on the server, the model is told, and the turn ends as
// stopped, the button gone.
func TestProgressAndStopInTelegram(t *testing.T) {
	s := newProgressStack(t, 10*time.Millisecond)
	s.start(nil)
	f := s.fake
	const group = -77
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot tool wait"})
	st := statusOf(t, f, group, "wait on f (Features Test Server): 25%, 1 of 4 · waiting")
	if !strings.HasPrefix(st.Plain, "⏳") || len(st.Buttons()) != 1 || !strings.HasPrefix(st.Buttons()[0], "⏹ Stop=x:") {
		t.Fatalf("status %q with buttons %q, want ⏳ and a Stop button", st.Plain, st.Buttons())
	}
	if ans := press(t, f, group, bob, st, "⏹ Stop"); !ans.ShowAlert || !strings.Contains(ans.Text, "Only the person who asked") {
		t.Errorf("another member's press was answered %+v", ans)
	}
	// Bob's press changed nothing: the call still waits, and Alice's
	// press stops it.
	if ans := press(t, f, group, alice, st, "⏹ Stop"); ans.ShowAlert || ans.Text != "Stopping…" {
		t.Errorf("the user's press was answered %+v", ans)
	}
	waitText(t, f, group, "Stopped.")
	waitCancelled(t, s.hub, "1")
	f.WaitFor(t, 30*time.Second, "the status without its button", func() bool {
		for _, m := range f.Messages(group) {
			if m.ID == st.ID {
				return len(m.Keyboard) == 0 && strings.HasPrefix(m.Plain, "⚠️ wait on f")
			}
		}
		return false
	})
	// The same button, pressed again once the turn's update is handled
	// (the status is edited a moment before the turn lets go of the
	// chat), finds nothing running.
	f.WaitFor(t, 30*time.Second, "the turn's update handled", func() bool {
		items, err := s.db.InboxQueued(t.Context(), 0, 0)
		return err == nil && len(items) == 0
	})
	if ans := press(t, f, group, alice, st, "⏹ Stop"); ans.Text != "This request has already finished." {
		t.Errorf("a press after the end was answered %+v", ans)
	}
	// The model reads, with the next message, that the user stopped the
	// call: the stopped call's result in the history, the turn closed
	// before the new message (see agent's stopped-turn note).
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot and now?"})
	waitText(t, f, group, "Hello: and now?")
	calls := s.model.Calls()
	var history []string
	for _, m := range calls[len(calls)-1].Request.Messages {
		history = append(history, m.Content)
	}
	if !strings.Contains(strings.Join(history, "\n"), "The user stopped this call before it finished") {
		t.Errorf("the next call's history does not say the user stopped the call:\n%s", strings.Join(history, "\n"))
	}
}

// /cancel stops the running call the same way.
func TestCancelCommandStopsTheCall(t *testing.T) {
	s := newProgressStack(t, 10*time.Millisecond)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "tool wait")
	statusOf(t, f, alice, "25%, 1 of 4")
	f.Text(alice, alice, "/cancel")
	waitText(t, f, alice, "Stopped.")
	waitCancelled(t, s.hub, "1")
}

// A server flooding progress (1,000 reports a second for 2 s) costs the
// status message one edit a ProgressInterval, not one a report; the
// title of the tool names it.
func TestProgressFloodInTelegram(t *testing.T) {
	const interval = 250 * time.Millisecond
	s := newProgressStack(t, interval)
	s.start(nil)
	f := s.fake
	began := time.Now()
	f.Text(alice, alice, `tool index {"flood": 2000, "spread_ms": 2000, "count": 3, "total": 300, "message": "indexing"}`)
	waitText(t, f, alice, "Tool said: indexed 3 of 300; 2003 progress notifications sent")
	elapsed := time.Since(began)
	st, ok := lastWith(f, alice, "Index the files on f")
	if !ok {
		t.Fatal("no status message names the tool by its title")
	}
	edits := 0
	for _, c := range f.Calls("editMessageText") {
		if c.Params["message_id"] == strconv.Itoa(st.ID) {
			edits++
		}
	}
	// One edit an interval, the first report's at once, and the final
	// one: a few more than elapsed/interval at most, however many
	// reports.
	bound := int(elapsed/interval) + 3
	t.Logf("2003 reports in %v: %d edits of the status message (%.1f a second; bound %d)", elapsed.Round(time.Millisecond), edits, float64(edits)/elapsed.Seconds(), bound)
	if edits < 2 || edits > bound {
		t.Errorf("%d edits, want 2 to %d", edits, bound)
	}
}

// A resource read the model asks for reports its progress on the status
// message as a tool call does, and its Stop button cancels the read on
// the server.
func TestReadProgressAndStopInTelegram(t *testing.T) {
	s := newProgressStack(t, 10*time.Millisecond)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "read features://slow/wait")
	st := statusOf(t, f, alice, "features://slow/wait on f (Features Test Server): 25%, 1 of 4 · reading")
	if !strings.HasPrefix(st.Plain, "⏳") || len(st.Buttons()) != 1 {
		t.Fatalf("status %q with buttons %q, want ⏳ and a Stop button", st.Plain, st.Buttons())
	}
	if ans := press(t, f, alice, alice, st, "⏹ Stop"); ans.Text != "Stopping…" {
		t.Errorf("the user's press was answered %+v", ans)
	}
	waitText(t, f, alice, "Stopped.")
	waitCancelled(t, s.hub, "1")
}
