package bot_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// stack is the whole program but main: real agent, real hub running the
// test server hub/testdata/echo (which needs no Node), real store, a
// scripted model and the Telegram fake.
type stack struct {
	t        testing.TB
	fake     *tgfake.Server
	model    *llmfake.Server
	hub      *hub.Hub
	db       *sqlite.DB
	agent    *agent.Agent
	settings string
}

func useTool(server, tool, args string) string {
	return "<use_mcp_tool>\n<server_name>" + server + "</server_name>\n<tool_name>" + tool + "</tool_name>\n<arguments>\n" + args + "\n</arguments>\n</use_mcp_tool>"
}

func complete(result string) string {
	return "<attempt_completion>\n<result>\n" + result + "\n</result>\n</attempt_completion>"
}

// longMarkdown is a reply well over 4096 characters, full of what HTML
// mode must escape, within the four messages an answer may take.
func longMarkdown() string {
	var b strings.Builder
	b.WriteString("# Results <&>\n\n")
	for i := range 100 {
		fmt.Fprintf(&b, "%d. **Item %d** has `a<b && c>d` and [a link](https://example.com/?q=%d&r=<x>) & more <stuff>\n", i+1, i, i)
	}
	b.WriteString("\n```go\nif a < b && c > d {\n\treturn \"<&>\"\n}\n```\n\n> quoted <text> & end\n\nTHE END")
	return b.String()
}

// scriptedModel answers from the last message, so any number of chats
// can run at once: each waits delay before answering.
func scriptedModel(delay time.Duration) llmfake.Handler {
	return func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		var r llmfake.Reply
		switch {
		case strings.Contains(last, "] Result:") || strings.Contains(last, "] Error:"):
			_, after, found := strings.Cut(last, "] Result:")
			if !found {
				_, after, _ = strings.Cut(last, "] Error:")
			}
			r = llmfake.Text(complete("Tool said: " + firstLineOf(after)))
		case strings.HasPrefix(last, "<answer>"):
			r = llmfake.Text(complete("You picked " + strings.TrimSuffix(strings.TrimPrefix(last, "<answer>"), "</answer>")))
		case strings.Contains(last, "please ask"):
			r = llmfake.Text("<ask_followup_question>\n<question>Which **city**?</question>\n<options>[\"Paris\", \"Rome & <Milan>\"]</options>\n</ask_followup_question>")
		case strings.Contains(last, "add numbers"):
			r = llmfake.Text("Adding.\n" + useTool("echo", "add", `{"a": 2, "b": 3}`))
		case strings.Contains(last, "long please"):
			r = llmfake.Text(longMarkdown())
		case strings.Contains(last, "which pid"):
			r = llmfake.Text(useTool("echo", "pid", `{}`))
		case strings.Contains(last, "picture"):
			r = llmfake.Text(useTool("echo", "image", `{}`))
		case strings.Contains(last, "echo "):
			_, msg, _ := strings.Cut(last, "echo ")
			args, _ := json.Marshal(map[string]string{"message": msg})
			r = llmfake.Text("Let me echo that.\n" + useTool("echo", "echo", string(args)))
		default:
			r = llmfake.Text("Hello! You said: " + last)
		}
		r.Delay = delay
		return r
	}
}

func firstLineOf(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "```") {
			return line
		}
	}
	return ""
}

func newStack(t testing.TB, h llmfake.Handler, editAgent func(*mcpgram.Profile, *agent.Options)) *stack {
	t.Helper()
	dir := t.TempDir()
	s := &stack{t: t, fake: tgfake.New(t)}
	s.settings = testenv.WriteSettings(t, dir, map[string]any{
		"echo":   testenv.EchoEntry(t, "echo", "image"),
		"broken": map[string]any{"command": filepath.Join(dir, "no-such-server")},
	})
	s.hub = testenv.StartHub(t, s.settings, hub.Options{NoWatch: true, RestartDelay: time.Hour})
	s.db = testenv.SQLite(t, filepath.Join(dir, "mcpgram.db"))
	s.model = llmfake.New(t, h)
	s.agent = newAgent(t, s.db, s.hub, s.model, editAgent)
	return s
}

func (s *stack) start(edit func(*bot.Options)) *harness {
	s.t.Helper()
	return startBotWith(s.t, s.fake, s.db, false, s.agent, s.hub, edit)
}

func lastWith(fake *tgfake.Server, chat int64, want string) (tgfake.Message, bool) {
	var got tgfake.Message
	ok := false
	for _, m := range fake.Messages(chat) {
		if strings.Contains(m.Plain, want) {
			got, ok = m, true
		}
	}
	return got, ok
}

func TestE2EToolRoundTripAndImage(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	s.start(nil)
	s.fake.Text(alice, alice, "please echo hi <there> & co")
	waitText(t, s.fake, alice, "Tool said: hi <there> & co")
	waitText(t, s.fake, alice, "echo on echo")
	s.fake.Text(alice, alice, "a picture please")
	s.fake.WaitFor(t, 30*time.Second, "a photo", func() bool {
		for _, m := range s.fake.Messages(alice) {
			if len(m.Photo) > 0 {
				return true
			}
		}
		return false
	})
	for _, m := range s.fake.Messages(alice) {
		if strings.Contains(m.Plain, "<use_mcp_tool") || strings.Contains(m.Plain, "server_name") {
			t.Errorf("raw tool XML shown to the user: %q", m.Plain)
		}
	}
}

func TestE2EOptionsPressedAndTyped(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	s.start(nil)
	s.fake.Text(alice, alice, "please ask me")
	q := waitText(t, s.fake, alice, "Which city?")
	if got := q.Buttons(); len(got) != 2 || strings.Contains(got[1], "Milan>=q") == false {
		t.Fatalf("buttons %q", got)
	}
	data := strings.SplitN(q.Buttons()[1], "=", 2)[1]
	// Bob pressing Alice's question in her private chat is refused.
	cb := s.fake.Press(alice, bob, q.ID, data)
	if ans := waitAnswer(t, s.fake, cb); !ans.ShowAlert {
		t.Errorf("press by another user: %+v", ans)
	}
	cb = s.fake.Press(alice, alice, q.ID, data)
	waitAnswer(t, s.fake, cb)
	waitText(t, s.fake, alice, "You picked Rome & <Milan>")
	cb = s.fake.Press(alice, alice, q.ID, data)
	if ans := waitAnswer(t, s.fake, cb); !ans.ShowAlert {
		t.Errorf("second press on an answered question: %+v", ans)
	}

	s.fake.Text(alice, alice, "please ask again")
	s.fake.WaitFor(t, 30*time.Second, "second question", func() bool { return countText(s.fake, alice, "Which city?") == 2 })
	s.fake.Text(alice, alice, "Lyon")
	waitText(t, s.fake, alice, "You picked Lyon")
	if n := countText(s.fake, alice, "You picked Rome"); n != 1 {
		t.Errorf("first answer sent %d times", n)
	}
}

func TestE2EApprovals(t *testing.T) {
	const group = -77
	// The agent's clock runs two hours late while Bob's request is made,
	// so his approval is born expired without racing a short timeout.
	var skew atomic.Int64
	s := newStack(t, scriptedModel(0), func(_ *mcpgram.Profile, o *agent.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	s.start(nil)
	ask := func(chat, user int64) tgfake.Message {
		t.Helper()
		before := countText(s.fake, chat, "Approval needed")
		text := "add numbers"
		if chat < 0 {
			text = "@mcpgram_bot add numbers"
		}
		s.fake.Text(chat, user, text)
		s.fake.WaitFor(t, 30*time.Second, "approval card", func() bool { return countText(s.fake, chat, "Approval needed") == before+1 })
		m, _ := lastWith(s.fake, chat, "Approval needed")
		return m
	}
	press := func(chat, user int64, m tgfake.Message, i int) tgfake.CallbackAnswer {
		t.Helper()
		return waitAnswer(t, s.fake, s.fake.Press(chat, user, m.ID, strings.SplitN(m.Buttons()[i], "=", 2)[1]))
	}

	m := ask(alice, alice)
	if !strings.Contains(m.Plain, "Run add on echo") || !strings.Contains(m.Plain, "• a: 2\n• b: 3") {
		t.Errorf("approval card: %q", m.Plain)
	}
	press(alice, alice, m, 0)
	waitText(t, s.fake, alice, "Tool said: The sum of 2 and 3 is 5")

	m = ask(alice, alice)
	press(alice, alice, m, 1)
	waitText(t, s.fake, alice, "Tool said: The user denied this operation.")

	m = ask(group, alice)
	if ans := press(group, bob, m, 0); !ans.ShowAlert {
		t.Errorf("wrong user: %+v", ans)
	}
	if n := countText(s.fake, group, "The sum of"); n != 0 {
		t.Errorf("the wrong user's press ran the tool")
	}

	// Nobody answers: it expires as denied (the group card above too).
	skew.Store(int64(-2 * time.Hour))
	m = ask(bob, bob)
	skew.Store(0)
	waitText(t, s.fake, bob, "Tool said: The user denied this operation.")
	// The expired card keeps what it asked and its outcome, and no
	// longer says when it expires.
	if got := waitText(t, s.fake, bob, "Expired: denied."); got.ID != m.ID || strings.Contains(got.Plain, "Expires in") ||
		!strings.HasSuffix(got.Plain, "(the server's claim, not checked).\n\n⌛ Expired: denied.") {
		t.Errorf("expired card (message %d, the card %d):\n%s", got.ID, m.ID, got.Plain)
	}
	if ans := press(bob, bob, m, 0); !ans.ShowAlert {
		t.Errorf("press after expiry: %+v", ans)
	}
	if n := countText(s.fake, bob, "The sum of"); n != 0 {
		t.Errorf("an expired approval ran the tool")
	}

	// The admin's Always allow persists to mcp-settings.json.
	m = ask(admin, admin)
	press(admin, admin, m, 2)
	waitText(t, s.fake, admin, "Tool said: The sum of 2 and 3 is 5")
	b, _ := os.ReadFile(s.settings)
	if !strings.Contains(string(b), `"add"`) {
		t.Errorf("Always allow did not persist: %s", b)
	}
}

func TestE2EServers(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	s.start(nil)
	s.fake.Text(alice, alice, "/servers")
	waitText(t, s.fake, alice, "only admins")
	s.fake.Text(admin, admin, "/servers")
	m := waitText(t, s.fake, admin, "MCP servers")
	if !strings.Contains(m.Plain, "broken: failed") || !strings.Contains(m.Plain, "echo: running") {
		t.Errorf("/servers: %q", m.Plain)
	}
	// Forged by a non-admin: alert, nothing changes.
	cb := s.fake.Press(admin, alice, m.ID, "s:d:0:echo")
	if ans := waitAnswer(t, s.fake, cb); !ans.ShowAlert {
		t.Errorf("forged toggle: %+v", ans)
	}
	if sv, _ := s.hub.Catalog().Server("echo"); sv.Status != mcpgram.StatusRunning {
		t.Errorf("forged toggle changed echo to %s", sv.Status)
	}
	cb = s.fake.Press(admin, admin, m.ID, "s:d:0:echo")
	waitAnswer(t, s.fake, cb)
	waitText(t, s.fake, admin, "echo: disabled")
	if sv, _ := s.hub.Catalog().Server("echo"); sv.Status != mcpgram.StatusDisabled {
		t.Errorf("after Disable: %s", sv.Status)
	}
	if b, _ := os.ReadFile(s.settings); !strings.Contains(string(b), `"disabled": true`) {
		t.Errorf("Disable did not persist:\n%s", b)
	}
	cb = s.fake.Press(admin, admin, m.ID, "s:e:0:echo")
	waitAnswer(t, s.fake, cb)
	waitText(t, s.fake, admin, "echo: running")
}

func TestE2ELongReplyAnd429(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	s.start(nil)
	s.fake.FloodWait("sendMessage", 1)
	s.fake.Text(alice, alice, "long please")
	waitText(t, s.fake, alice, "THE END")
	var all strings.Builder
	for _, m := range s.fake.Messages(alice) {
		if m.ParseMode != "HTML" {
			t.Errorf("part sent as plain text: %.60q", m.Plain)
		}
		all.WriteString(m.Plain + "\n")
	}
	got := all.String()
	for _, want := range []string{"Results <&>", "Item 0 has a<b && c>d", "Item 99 has", "a link (https://example.com/?q=0&r=<x>) & more <stuff>", "return \"<&>\"", "quoted <text> & end"} {
		if !strings.Contains(got, want) {
			t.Errorf("reply lacks %q", want)
		}
	}
	if len(s.fake.Messages(alice)) < 2 {
		t.Errorf("long reply was not split: %.300q", got)
	}
}

func TestE2ERestartLosesAndDoublesNothing(t *testing.T) {
	var mu sync.Mutex
	slow := true
	base := scriptedModel(0)
	s := newStack(t, func(c llmfake.Call) llmfake.Reply {
		r := base(c)
		mu.Lock()
		defer mu.Unlock()
		if slow && strings.Contains(c.Request.Last(), "first") {
			r.Delay = 5 * time.Second // the bot is stopped while this runs
		}
		return r
	}, nil)
	h1 := s.start(func(c *bot.Options) { c.ShutdownGrace = 200 * time.Millisecond })
	s.fake.Text(alice, alice, "first")
	s.fake.Text(alice, alice, "second")
	s.fake.WaitFor(t, 30*time.Second, "the model call for 'first'", func() bool { return len(s.model.Calls()) >= 1 })
	h1.stopWant(bot.ErrCutShort)
	s.fake.Text(alice, alice, "third")
	mu.Lock()
	slow = false
	mu.Unlock()
	waitHandled(t, s.start(nil))
	for _, w := range []string{"You said: first", "You said: second", "You said: third"} {
		if n := countText(s.fake, alice, w); n != 1 {
			t.Errorf("%q answered %d times, want once", w, n)
		}
	}
	if n := countText(s.fake, alice, "Stopped"); n != 0 {
		t.Errorf("shutdown sent %q to the user", "Stopped")
	}
}

func TestE2EManyChats(t *testing.T) {
	s := newStack(t, scriptedModel(50*time.Millisecond), nil)
	s.start(nil)
	const n = 40
	for i := range n {
		s.fake.Text(int64(5000+i), int64(5000+i), fmt.Sprintf("echo chat %d", i))
	}
	for i := range n {
		waitText(t, s.fake, int64(5000+i), fmt.Sprintf("Tool said: chat %d", i))
	}
}
