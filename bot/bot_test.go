package bot_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

func TestToolRoundTrip(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(2), nil)

	fake.Text(alice, alice, "tool")
	final := waitText(t, fake, alice, "done <&>")
	if final.ParseMode != "HTML" || !strings.Contains(final.Text, "<b>done</b> &lt;&amp;&gt;") {
		t.Errorf("final message: got %q (%s)", final.Text, final.ParseMode)
	}
	msgs := fake.Messages(alice)
	var status, photo bool
	files := map[string]string{}
	for _, m := range msgs {
		if m.DocumentName != "" {
			files[m.DocumentName] = string(m.Document)
		}
		if strings.Contains(m.Plain, "echo on everything") {
			status = true
		}
		if len(m.Photo) > 0 {
			photo = true
		}
		if strings.Contains(m.Plain, "Let me check") {
			t.Errorf("draft %q was not removed", m.Plain)
		}
	}
	if !status || !photo {
		t.Errorf("status message %v, photo %v; want both\n%s", status, photo, fake.Dump())
	}
	audio := false
	for name, data := range files {
		audio = audio || (strings.HasPrefix(name, "file") && data == "RIFF")
	}
	if files["q3.csv"] != "a,b\n1,2\n" || !audio {
		t.Errorf("files sent as documents: %q, want q3.csv and the audio", files)
	}
	// A name that hides what it is shows its override.
	if files[`invoice\u202Efdp.exe`] != "MZ" {
		t.Errorf("files sent as documents: %q, want invoice\\u202Efdp.exe", files)
	}
	if fake.Actions(alice) == 0 {
		t.Errorf("no typing action sent")
	}
	if got := len(fake.Commands(0)); got != 9 {
		t.Errorf("setMyCommands registered %d commands for everyone, want 9", got)
	}
}

func TestCommands(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(2), nil)
	tests := []struct{ cmd, want string }{
		{"/start", "srv00 (1 tool)"},
		{"/start", fmt.Sprintf("Your Telegram user id is %d (what the bot's operator lists in ALLOWED_USER_IDS and ADMIN_USER_IDS).", alice)},
		{"/help", "/cancel"},
		{"/tools", "echo – Echoes <input>"},
		{"/reset", "Started a new conversation."},
		{"/cancel", "Nothing is running."},
		{"/servers", "only admins"},
		{"/usage", "No daily budget."},
	}
	for _, tt := range tests {
		fake.Text(alice, alice, tt.cmd)
		waitText(t, fake, alice, tt.want)
	}
}

func TestQuestionPressedAndTyped(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)

	fake.Text(alice, alice, "ask")
	q := waitText(t, fake, alice, "Which city?")
	buttons := q.Buttons()
	if len(buttons) != 2 || !strings.HasSuffix(buttons[1], "=q:1:1") || len([]rune(strings.Split(buttons[1], "=")[0])) > 40 {
		t.Fatalf("buttons: got %q", buttons)
	}
	cb := fake.Press(alice, alice, q.ID, "q:1:1")
	if ans := waitAnswer(t, fake, cb); ans.ShowAlert {
		t.Errorf("press answered with an alert: %+v", ans)
	}
	waitText(t, fake, alice, "you chose Rome, the eternal city, which is a very long option label indeed")
	q = waitText(t, fake, alice, "Which city?")
	if len(q.Keyboard) != 0 || !strings.Contains(q.Plain, "→ Rome, the eternal city") {
		t.Errorf("question after press: %q, buttons %q", q.Plain, q.Buttons())
	}
	// A second press on the answered question changes nothing.
	cb = fake.Press(alice, alice, q.ID, "q:1:0")
	if ans := waitAnswer(t, fake, cb); !ans.ShowAlert {
		t.Errorf("stale press: got %+v, want an alert", ans)
	}

	fake.Text(alice, alice, "ask")
	fake.WaitFor(t, 5*time.Second, "second question", func() bool { return countText(fake, alice, "Which city?") == 2 })
	fake.Text(alice, alice, "Lyon")
	waitText(t, fake, alice, "typed answer: Lyon")
	for _, m := range fake.Messages(alice) {
		if len(m.Keyboard) > 0 {
			t.Errorf("message %q still has buttons after a typed answer", m.Plain)
		}
	}
	if n := countText(fake, alice, "you chose Paris"); n != 0 {
		t.Errorf("stale press started a turn")
	}
}

func TestApprovals(t *testing.T) {
	const group = -100
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)

	approval := func(chat, user int64, n int, text string) tgfake.Message {
		t.Helper()
		if chat < 0 {
			text = "@mcpgram_bot " + text
		}
		fake.Text(chat, user, text)
		var m tgfake.Message
		fake.WaitFor(t, 5*time.Second, "approval card", func() bool {
			c := 0
			for _, msg := range fake.Messages(chat) {
				if strings.Contains(msg.Plain, "Approval needed") {
					c++
					m = msg
				}
			}
			return c == n
		})
		if !strings.Contains(m.Plain, `• message: "<hi> & bye"`) {
			t.Errorf("approval does not show the arguments: %q", m.Plain)
		}
		return m
	}

	t.Run("approve", func(t *testing.T) {
		m := approval(alice, alice, 1, "approve")
		if len(m.Buttons()) != 2 {
			t.Errorf("non-admin buttons: %q", m.Buttons())
		}
		// A non-admin forging "Always allow" gets an alert and nothing runs.
		cb := fake.Press(alice, alice, m.ID, strings.Replace(strings.Split(m.Buttons()[0], "=")[1], ":y", ":A", 1))
		if ans := waitAnswer(t, fake, cb); !ans.ShowAlert {
			t.Errorf("forged always: %+v", ans)
		}
		cb = fake.Press(alice, alice, m.ID, strings.Split(m.Buttons()[0], "=")[1])
		waitAnswer(t, fake, cb)
		waitText(t, fake, alice, "approved (always=false)")
		waitText(t, fake, alice, "Approved.")
	})
	t.Run("deny", func(t *testing.T) {
		m := approval(alice, alice, 2, "approve")
		cb := fake.Press(alice, alice, m.ID, strings.Split(m.Buttons()[1], "=")[1])
		waitAnswer(t, fake, cb)
		waitText(t, fake, alice, "denied")
	})
	t.Run("admin always", func(t *testing.T) {
		m := approval(admin, admin, 1, "approve")
		if len(m.Buttons()) != 3 {
			t.Fatalf("admin buttons: %q", m.Buttons())
		}
		cb := fake.Press(admin, admin, m.ID, strings.Split(m.Buttons()[2], "=")[1])
		waitAnswer(t, fake, cb)
		waitText(t, fake, admin, "approved (always=true)")
	})
	t.Run("wrong user", func(t *testing.T) {
		m := approval(group, alice, 1, "approve")
		cb := fake.Press(group, bob, m.ID, strings.Split(m.Buttons()[0], "=")[1])
		if ans := waitAnswer(t, fake, cb); !ans.ShowAlert || !strings.Contains(ans.Text, "someone else") {
			t.Errorf("wrong user press: %+v", ans)
		}
		if n := countText(fake, group, "approved"); n != 0 {
			t.Errorf("wrong user's press ran the tool")
		}
		cb = fake.Press(group, alice, m.ID, strings.Split(m.Buttons()[0], "=")[1])
		waitAnswer(t, fake, cb)
		waitText(t, fake, group, "approved (always=false)")
	})
	t.Run("expire", func(t *testing.T) {
		approval(bob, bob, 1, "approve briefly")
		waitText(t, fake, bob, "expired, so denied")
		waitText(t, fake, bob, "Expired: denied.")
	})
}

func TestServers(t *testing.T) {
	fake := tgfake.New(t)
	h := newFakeHub(10)
	startBot(t, fake, t.TempDir(), newFakeAgent(), h, nil)

	fake.Text(admin, admin, "/servers")
	m := waitText(t, fake, admin, "MCP servers (page 1 of 2)")
	if !strings.Contains(m.Plain, "srv01: failed: exited with code 1") || !strings.Contains(m.Plain, "panic: <boom> & more") {
		t.Errorf("/servers text: %q", m.Plain)
	}
	want := []string{"Disable srv00=s:d:0:srv00", "Disable srv01=s:d:0:srv01", "Restart srv01=s:r:0:srv01"}
	for i, w := range want {
		if m.Buttons()[i] != w {
			t.Errorf("button %d: got %q, want %q", i, m.Buttons()[i], w)
		}
	}
	cb := fake.Press(admin, admin, m.ID, "s:d:0:srv00")
	waitAnswer(t, fake, cb)
	if got := h.Status("srv00"); got != mcpgram.StatusDisabled {
		t.Errorf("srv00 after Disable: %s", got)
	}
	m = waitText(t, fake, admin, "srv00: disabled")
	if m.Buttons()[0] != "Enable srv00=s:e:0:srv00" {
		t.Errorf("after disable, first button: %q", m.Buttons()[0])
	}
	cb = fake.Press(admin, admin, m.ID, "s:r:0:srv01")
	if ans := waitAnswer(t, fake, cb); !ans.ShowAlert || !strings.Contains(ans.Text, "no such file") {
		t.Errorf("failed restart: %+v", ans)
	}
	cb = fake.Press(admin, admin, m.ID, "s:p:1:")
	waitAnswer(t, fake, cb)
	waitText(t, fake, admin, "page 2 of 2")

	// A non-admin: refusal, and a forged press changes nothing.
	fake.Text(alice, alice, "/servers")
	waitText(t, fake, alice, "only admins can manage servers")
	cb = fake.Press(alice, alice, m.ID, "s:e:0:srv00")
	if ans := waitAnswer(t, fake, cb); !ans.ShowAlert {
		t.Errorf("forged press: %+v", ans)
	}
	if got := h.Status("srv00"); got != mcpgram.StatusDisabled {
		t.Errorf("forged press changed srv00 to %s", got)
	}
}

func TestLongReplyAnd429(t *testing.T) {
	fake := tgfake.New(t)
	startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	fake.FloodWait("sendMessage", 1)
	fake.Fail("sendMessage", 1, 502, "Bad Gateway", 0)
	fake.Text(alice, alice, "long")
	waitText(t, fake, alice, "Paragraph 199: if a < b && c > d then bold <tag> and x<y>.")
	msgs := fake.Messages(alice)
	if len(msgs) < 3 {
		t.Fatalf("got %d messages, want the reply split", len(msgs))
	}
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(m.Plain + "\n")
	}
	for i := range 200 {
		if n := strings.Count(all.String(), fmt.Sprintf("Paragraph %d: ", i)); n != 1 {
			t.Fatalf("paragraph %d appears %d times", i, n)
		}
	}
	for _, m := range msgs {
		if m.ParseMode != "HTML" {
			t.Errorf("a part fell back to plain text")
		}
	}
}

func TestGroups(t *testing.T) {
	const group = -42
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)
	fake.Text(group, alice, "chatter among humans")
	fake.Text(group, alice, "/help@otherbot")
	asked := fake.Text(group, alice, "hey @mcpgram_bot hello")
	m := waitText(t, fake, group, "echo: hey hello")
	if m.ReplyTo != asked {
		t.Errorf("group answer replies to message %d, want %d", m.ReplyTo, asked)
	}
	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "and you?", ReplyTo: m.ID})
	waitText(t, fake, group, "echo: and you?")
	fake.Text(group, bob, "/help@mcpgram_bot")
	waitText(t, fake, group, "How to use me")
	if a.Turns("chatter among humans") != 0 || countText(fake, group, "How to use me") != 1 {
		t.Errorf("answered a message not addressed to the bot\n%s", fake.Dump())
	}
}

func TestAccessAndRateLimit(t *testing.T) {
	fake := tgfake.New(t)
	h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), func(c *bot.Options) {
		c.AllowedUserIDs = []int64{alice}
		c.RateLimitPerMinute = 2
	})
	fake.Text(bob, bob, "hi")
	// A stranger learns the id the operator would let in.
	waitText(t, fake, bob, fmt.Sprintf("Sorry, this bot is private. Your Telegram user id is %d: the bot's operator can let you in with it.", bob))
	for i := range 5 {
		fake.Text(alice, alice, fmt.Sprintf("m%d", i))
	}
	waitText(t, fake, alice, "faster than I can keep up")
	waitHandled(t, h)
	if n := countText(fake, alice, "echo: m"); n != 2 {
		t.Errorf("%d messages answered, want 2", n)
	}
	if n := countText(fake, alice, "faster than I can keep up"); n != 1 {
		t.Errorf("rate-limit notice sent %d times, want once", n)
	}
}

func TestCancel(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)
	fake.Text(alice, alice, "block")
	fake.WaitFor(t, 5*time.Second, "turn started", func() bool { return a.Turns("block") == 1 })
	fake.Text(alice, alice, "/cancel")
	waitText(t, fake, alice, "Stopped.")
	fake.Text(alice, alice, "after")
	waitText(t, fake, alice, "echo: after")
}

// A restart between receiving and answering loses nothing and doubles nothing.
func TestRestartLosesAndDoublesNothing(t *testing.T) {
	fake := tgfake.New(t)
	dir := t.TempDir()
	a := newFakeAgent()
	h1 := startBot(t, fake, dir, a, newFakeHub(1), func(c *bot.Options) { c.ShutdownGrace = 100 * time.Millisecond })
	fake.Text(alice, alice, "block")
	fake.Text(alice, alice, "queued behind")
	fake.Text(bob, bob, "quick")
	waitText(t, fake, bob, "echo: quick")
	fake.WaitFor(t, 5*time.Second, "blocked turn", func() bool { return a.Turns("block") == 1 })
	fake.WaitFor(t, 5*time.Second, "batch confirmed", func() bool { return fake.Unconfirmed() == 0 })
	h1.stopWant(bot.ErrCutShort)
	if n := countText(fake, alice, "Stopped."); n != 0 {
		t.Errorf("shutdown told the user %q", "Stopped.")
	}
	fake.Text(alice, alice, "while down")

	close(a.block) // the next run's turn finishes
	waitHandled(t, startBot(t, fake, dir, a, newFakeHub(1), nil))
	for text, want := range map[string]int{"echo: quick": 1, "unblocked": 1, "echo: queued behind": 1, "echo: while down": 1} {
		chat := int64(alice)
		if text == "echo: quick" {
			chat = bob
		}
		if n := countText(fake, chat, text); n != want {
			t.Errorf("%q sent %d times, want %d", text, n, want)
		}
	}
	if a.Turns("quick") != 1 || a.Turns("queued behind") != 1 {
		t.Errorf("turns: quick %d, queued %d; want 1 each", a.Turns("quick"), a.Turns("queued behind"))
	}
}

func TestConflictAndServerErrors(t *testing.T) {
	fake := tgfake.New(t)
	fake.Fail("getUpdates", 2, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0)
	fake.Fail("getUpdates", 1, 500, "Internal Server Error", 0)
	h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	fake.Text(alice, alice, "still works")
	waitText(t, fake, alice, "echo: still works")
	if !strings.Contains(h.log.String(), "409 Conflict: another instance is polling") {
		t.Errorf("no clear 409 log line:\n%s", h.log.String())
	}
}

func TestManyChats(t *testing.T) {
	fake := tgfake.New(t)
	startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	const n = 100
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); fake.Text(int64(1000+i), int64(1000+i), fmt.Sprintf("hi %d", i)) }()
	}
	wg.Wait()
	for i := range n {
		waitText(t, fake, int64(1000+i), fmt.Sprintf("echo: hi %d", i))
	}
}

func TestRunRejectsBadToken(t *testing.T) {
	fake := tgfake.New(t)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := bot.New("999:wrong", newFakeAgent(), partsOf(newFakeAgent()), newFakeHub(0), db, testConfig(fake, &testenv.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.Run(ctx); err == nil || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
		t.Errorf("Run with a bad token: got %v, want an error naming TELEGRAM_BOT_TOKEN", err)
	}
}

func TestOneChatInOrder(t *testing.T) {
	fake := tgfake.New(t)
	startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	for i := range 8 {
		fake.Text(alice, alice, fmt.Sprintf("n%d", i))
	}
	waitText(t, fake, alice, "echo: n7")
	var got []string
	for _, m := range fake.Messages(alice) {
		got = append(got, m.Plain)
	}
	want := []string{"echo: n0", "echo: n1", "echo: n2", "echo: n3", "echo: n4", "echo: n5", "echo: n6", "echo: n7"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("replies out of order: %q", got)
	}
}

// Each scope gets its menu: members of groups the commands anyone may
// use; private chats and group administrators also /system and /model
// (and /tools' switches, which they may press); the operators /servers
// and /stats.
func TestCommandMenusPerScope(t *testing.T) {
	fake := tgfake.New(t)
	fake.Text(admin, admin, "hello") // Telegram knows the chat once the admin wrote
	startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
	waitText(t, fake, admin, "echo: hello")
	names := func(cmds []tgbotapi.BotCommand) string {
		var out []string
		for _, c := range cmds {
			out = append(out, c.Command)
		}
		return strings.Join(out, " ")
	}
	everyone := "start help reset tools usage retry cancel prompts tasks"
	owner := everyone + " system model topics connections"
	for _, tt := range []struct {
		scope string
		got   []tgbotapi.BotCommand
		want  string
	}{
		{"default", fake.Commands(0), everyone},
		{"all_group_chats", fake.ScopeCommands("all_group_chats"), everyone},
		{"all_private_chats", fake.ScopeCommands("all_private_chats"), owner},
		{"all_chat_administrators", fake.ScopeCommands("all_chat_administrators"), owner},
		{"the operator's chat", fake.Commands(admin), owner + " servers stats"},
	} {
		if got := names(tt.got); got != tt.want {
			t.Errorf("%s: menu %q, want %q", tt.scope, got, tt.want)
		}
	}
	for _, c := range fake.ScopeCommands("all_chat_administrators") {
		if c.Command == "tools" && !strings.Contains(c.Description, "switches") {
			t.Errorf("administrators' /tools reads %q, want it to mention the switches", c.Description)
		}
	}
	if got := fake.Commands(alice); len(got) != 0 {
		t.Errorf("a user who is no operator got a chat menu of her own: %+v", got)
	}
}

func TestStreaming(t *testing.T) {
	t.Run("sendMessageDraft", func(t *testing.T) {
		fake := tgfake.New(t)
		fake.EnableDrafts()
		startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
		fake.Text(alice, alice, "stream")
		waitText(t, fake, alice, "word4 <&> end")
		drafts := fake.Drafts(alice)
		if len(drafts) < 2 || !strings.Contains(drafts[len(drafts)-1], "word") {
			t.Errorf("drafts: %q", drafts)
		}
		if n := len(fake.Calls("deleteMessage")); n != 0 || len(fake.Messages(alice)) != 1 {
			t.Errorf("with drafts: %d deletes, %d messages; want 0 and 1", n, len(fake.Messages(alice)))
		}
	})
	t.Run("edits", func(t *testing.T) {
		fake := tgfake.New(t)
		h := startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
		fake.Text(alice, alice, "stream")
		waitText(t, fake, alice, "word4 <&> end")
		edits := 0
		for _, c := range fake.Calls("editMessageText") {
			if strings.Contains(c.Params["text"], "word") {
				edits++
			}
		}
		if edits == 0 || len(fake.Calls("deleteMessage")) != 1 || len(fake.Messages(alice)) != 1 {
			t.Errorf("fallback: %d draft edits, %d deletes, %d messages\n%s", edits, len(fake.Calls("deleteMessage")), len(fake.Messages(alice)), fake.Dump())
		}
		if !strings.Contains(h.log.String(), "lacks sendMessageDraft") {
			t.Errorf("no log line about the fallback")
		}
	})
	t.Run("groups get only the answer", func(t *testing.T) {
		fake := tgfake.New(t)
		fake.EnableDrafts()
		startBot(t, fake, t.TempDir(), newFakeAgent(), newFakeHub(1), nil)
		fake.Text(-5, alice, "@mcpgram_bot stream")
		waitText(t, fake, -5, "word4 <&> end")
		if len(fake.Calls("sendMessageDraft")) != 0 || len(fake.Calls("editMessageText")) != 0 {
			t.Errorf("streamed in a group")
		}
	})
}

func TestNewValidates(t *testing.T) {
	if _, err := bot.New("", newFakeAgent(), partsOf(newFakeAgent()), newFakeHub(0), nil, bot.Options{}); err == nil {
		t.Errorf("New without token: no error")
	}
	_ = context.Background
}
