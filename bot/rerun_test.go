package bot_test

// What a crash can repeat of a turn: an update run again is the same
// turn, carried on from what it stored (see agent.Request.TurnID), and
// the answer is the last thing a turn sends.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// lostMarks is a store that loses the inbox's done marks while lose is
// set, as a bot that stops between a turn's end and its update's mark
// does: the update runs again at the next start.
type lostMarks struct {
	*sqlite.DB
	lose atomic.Bool
}

func (d *lostMarks) InboxDone(ctx context.Context, ids ...int64) error {
	if d.lose.Load() {
		return fmt.Errorf("%w: the bot stopped before the mark", store.ErrUnavailable)
	}
	return d.DB.InboxDone(ctx, ids...)
}

// An update run again because the bot stopped before marking it done,
// after its turn ended, is the same turn: its answer goes out again as it
// was (whether it reached the chat before the stop is not known), and
// neither the model nor the tool is asked again.
func TestE2ERunAgainAfterItsTurnEnded(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	lost := &lostMarks{DB: s.db}
	lost.lose.Store(true)
	h := startBotOn(t, s.fake, s.db, lost, false, s.agent, s.hub, nil)
	s.fake.Text(alice, alice, "echo the invoice")
	waitText(t, s.fake, alice, "Tool said: the invoice")
	calls := len(s.model.Calls())
	h.stop()
	lost.lose.Store(false)
	waitHandled(t, s.start(nil))
	if n := countText(s.fake, alice, "Tool said: the invoice"); n != 2 {
		t.Errorf("the answer went out %d times, want twice: at the turn's end, and again when its update ran again", n)
	}
	if n := len(s.model.Calls()) - calls; n != 0 {
		t.Errorf("the model was asked %d more times, want none", n)
	}
	audit, err := s.db.ToolCalls(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 1 {
		t.Errorf("the tool ran %d times, want once: %+v", len(audit), audit)
	}
}

// The turn's last word is the last thing the bot sends for it: the
// status message's summary goes before it, so that after the answer only
// its update's done mark is written (a crash in between sends the answer
// again; see TestE2ERunAgainAfterItsTurnEnded).
func TestE2ELastWordGoesLast(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	h := s.start(nil)
	s.fake.Text(alice, alice, "echo the invoice")
	waitText(t, s.fake, alice, "Tool said: the invoice")
	waitHandled(t, h)
	var last tgfake.Call
	for _, c := range s.fake.Calls("") {
		// "typing" is no message, and a call of it under way may land late.
		if c.Params["chat_id"] == fmt.Sprint(alice) && c.Method != "sendChatAction" {
			last = c
		}
	}
	if last.Method != "sendMessage" || !strings.Contains(last.Params["text"], "Tool said: the invoice") {
		t.Errorf("the bot's last call for the chat was %s %v, want the answer's sendMessage", last.Method, last.Params)
	}
}
