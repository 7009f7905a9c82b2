package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// waitHandled waits until Telegram has no update the bot did not take and
// the inbox has none the bot did not finish.
func waitHandled(t testing.TB, h *harness) {
	t.Helper()
	// A deadline for a failure report, not a goal: under -race on a
	// loaded 2-core machine a backlog of a thousand updates takes minutes.
	h.fake.WaitFor(t, 3*time.Minute, "every update handled", func() bool {
		if h.fake.Unconfirmed() != 0 {
			return false
		}
		items, err := h.db.InboxQueued(t.Context(), 0, 0)
		return err == nil && len(items) == 0
	})
}

// A chat with over a thousand updates waiting behind a long turn does not
// hold up another chat, and its own backlog is handled in order after.
func TestBacklogDoesNotStallOtherChats(t *testing.T) {
	const backlog = 1100
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), func(c *bot.Options) { c.RateLimitPerMinute = 1 << 20 })
	fake.Text(alice, alice, "block")
	fake.WaitFor(t, 10*time.Second, "blocked turn", func() bool { return a.Turns("block") == 1 })
	for i := range backlog {
		fake.Text(alice, alice, fmt.Sprintf("spam %d", i))
	}
	fake.Text(bob, bob, "hello")
	waitText(t, fake, bob, "echo: hello")
	if n := countText(fake, alice, "echo: spam"); n != 0 {
		t.Errorf("%d of alice's messages answered while her turn still ran", n)
	}

	close(a.block)
	waitText(t, fake, alice, "unblocked")
	waitHandled(t, h)
	var got []string
	for _, m := range fake.Messages(alice) {
		if strings.HasPrefix(m.Plain, "echo: spam ") {
			got = append(got, m.Plain)
		}
	}
	if len(got) != backlog {
		t.Fatalf("alice's backlog: %d answers, want %d", len(got), backlog)
	}
	for i, g := range got {
		if want := fmt.Sprintf("echo: spam %d", i); g != want {
			t.Fatalf("answer %d: got %q, want %q (out of order or doubled)", i, g, want)
		}
	}
}

// A stranger's messages get one refusal, then silence: they cannot make
// the bot spend the chat's Telegram budget.
func TestStrangerRefusedOnce(t *testing.T) {
	fake := tgfake.New(t)
	h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), func(c *bot.Options) {
		c.AllowedUserIDs = []int64{alice}
	})
	for i := range 10 {
		fake.Text(bob, bob, fmt.Sprintf("let me in %d", i))
	}
	waitHandled(t, h)
	if n := countText(fake, bob, "this bot is private"); n != 1 {
		t.Errorf("stranger refused %d times, want once", n)
	}
	// Allowed users are unaffected.
	fake.Text(alice, alice, "hi")
	waitText(t, fake, alice, "echo: hi")
}

// In a group, /cancel stops a turn only for the user who started it or
// an admin.
func TestCancelInGroup(t *testing.T) {
	const group = -77
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)

	fake.Text(group, alice, "@mcpgram_bot block")
	fake.WaitFor(t, 10*time.Second, "alice's turn", func() bool { return a.Turns("block") == 1 })
	fake.Text(group, bob, "/cancel")
	waitText(t, fake, group, "can stop this request")
	if n := countText(fake, group, "Stopped."); n != 0 {
		t.Fatalf("bob's /cancel stopped alice's turn")
	}
	fake.Text(group, admin, "/cancel")
	waitText(t, fake, group, "Stopped.")

	fake.Text(group, alice, "@mcpgram_bot block")
	fake.WaitFor(t, 10*time.Second, "alice's second turn", func() bool { return a.Turns("block") == 2 })
	fake.Text(group, alice, "/cancel")
	fake.WaitFor(t, 10*time.Second, "alice's own /cancel", func() bool { return countText(fake, group, "Stopped.") == 2 })
	if n := countText(fake, group, "can stop this request"); n != 1 {
		t.Errorf("refused %d /cancels, want 1", n)
	}
}

// Button presses count against the per-user rate limit; a refused press
// is answered with an alert, never left spinning, and changes nothing.
func TestPressesRateLimited(t *testing.T) {
	fake := tgfake.New(t)
	fh := newFakeHub(10)
	startBot(t, fake, t.TempDir(), newFakeAgent(), fh, func(c *bot.Options) { c.RateLimitPerMinute = 1 })

	t.Run("question", func(t *testing.T) {
		fake.Text(alice, alice, "ask")
		q := waitText(t, fake, alice, "Which city?")
		data := strings.Split(q.Buttons()[0], "=")[1]
		cb := fake.Press(alice, alice, q.ID, data)
		if ans := waitAnswer(t, fake, cb); !ans.ShowAlert || !strings.Contains(ans.Text, "faster than I can keep up") {
			t.Errorf("press over the limit: got %+v, want a rate-limit alert", ans)
		}
		if n := countText(fake, alice, "you chose"); n != 0 {
			t.Errorf("a press over the limit answered the question")
		}
	})
	t.Run("servers", func(t *testing.T) {
		fake.Text(admin, admin, "/servers")
		m := waitText(t, fake, admin, "MCP servers (page 1 of 2)")
		cb := fake.Press(admin, admin, m.ID, "s:d:0:srv00")
		if ans := waitAnswer(t, fake, cb); !ans.ShowAlert || !strings.Contains(ans.Text, "faster than I can keep up") {
			t.Errorf("/servers press over the limit: got %+v, want a rate-limit alert", ans)
		}
		if got := fh.Status("srv00"); got != mcpgram.StatusRunning {
			t.Errorf("a press over the limit changed srv00 to %s", got)
		}
	})
}
