package bot_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// An unknown command is answered with the commands, and never reaches
// the model; in a group, a command for another bot, or one of no bot's
// name that is not ours, is not for this bot.
func TestUnknownCommand(t *testing.T) {
	const group = -51
	s := newStack(t, scriptedModel(0), nil)
	h := s.start(nil)
	s.fake.Text(alice, alice, "/frobnicate now")
	m := waitText(t, s.fake, alice, "I don't know /frobnicate.")
	if want := "My commands: /start /help /reset /tools /usage /retry /cancel /prompts /tasks /system /model /topics /connections. /help says what each does."; !strings.Contains(m.Plain, want) {
		t.Errorf("answer to an unknown command = %q, want it to say %q", m.Plain, want)
	}
	s.fake.Text(admin, admin, "/Frobnicate")
	if m := waitText(t, s.fake, admin, "I don't know /Frobnicate."); !strings.Contains(m.Plain, "/model /topics /connections /servers /stats.") {
		t.Errorf("an admin's list lacks the admins' commands: %q", m.Plain)
	}
	s.fake.Text(group, alice, "/frobnicate")
	s.fake.Text(group, alice, "/start@otherbot")
	s.fake.Text(group, alice, "/frobnicate@otherbot")
	s.fake.Text(group, alice, "/frobnicate@mcpgram_bot")
	waitText(t, s.fake, group, "I don't know /frobnicate.")
	s.fake.Text(alice, alice, "/help@otherbot")
	waitText(t, s.fake, alice, "I don't know /help.")
	waitHandled(t, h)
	if n := len(s.fake.Messages(group)); n != 1 {
		t.Errorf("the group got %d messages, want the one answer to the command named for this bot:\n%s", n, s.fake.Dump())
	}
	if n := len(s.model.Calls()); n != 0 {
		t.Errorf("the model was called %d times for commands", n)
	}
}

// Commands that need no model answer at once while a turn of the chat
// runs, and the turn goes on; a message sent meanwhile waits for the
// turn, and reads what a command set before it.
func TestCommandsAnswerDuringATurn(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	var asked atomic.Int32
	free := func() { once.Do(func() { close(release) }) }
	base := scriptedModel(0)
	s := newStack(t, func(c llmfake.Call) llmfake.Reply {
		asked.Add(1)
		if strings.Contains(c.Request.Last(), "slow") {
			started <- struct{}{}
			<-release
		}
		return base(c)
	}, nil)
	t.Cleanup(free)
	s.start(nil)
	s.fake.Text(admin, admin, "slow please")
	<-started
	for _, c := range []struct{ cmd, want string }{
		{"/help", "How to use me"},
		{"/start", "Connected:"},
		{"/tools", "echo"},
		{"/usage", "Your token usage"},
		{"/system Answer in French.", "Answer in French."},
		{"/model", "fake"},
		{"/servers", "MCP servers"},
		{"/stats", "Servers now"},
		{"/nope", "I don't know /nope."},
	} {
		s.fake.Text(admin, admin, c.cmd)
		waitText(t, s.fake, admin, c.want)
	}
	s.fake.Text(admin, admin, "then this")
	// Every command was answered while the model still held the turn,
	// and none of them asked the model.
	if n := countText(s.fake, admin, "You said:"); n != 0 || asked.Load() != 1 {
		t.Fatalf("a turn ended (%d) or the model was asked %d times before the commands were answered", n, asked.Load())
	}
	free()
	waitText(t, s.fake, admin, "You said: then this")
	var order []string
	for _, m := range s.fake.Messages(admin) {
		if strings.Contains(m.Plain, "You said:") {
			order = append(order, m.Plain)
		}
	}
	if len(order) != 2 || !strings.Contains(order[0], "slow please") {
		t.Errorf("answers %q, want the turn's, then the message's", order)
	}
	calls := s.model.Calls()
	if len(calls) != 2 || !strings.Contains(calls[1].Request.Messages[0].Content, "Answer in French.") {
		t.Errorf("the message after /system was not told the instructions: %d calls", len(calls))
	}
}

// A message sent right after a command that runs beside turns waits for
// that command to end: a turn never starts before a command sent ahead of
// it.
func TestTurnWaitsForCommandSentBefore(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	a.gate, a.entered = make(chan struct{}), make(chan struct{}, 1)
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)
	fake.Text(alice, alice, "/system Be brief.")
	<-a.entered
	fake.Text(alice, alice, "hello")
	fake.WaitFor(t, 30*time.Second, "the message waiting behind the command", func() bool { return h.bot.Behind() == 1 })
	if n := a.Turns("hello"); n != 0 {
		t.Fatalf("the turn started while the command sent before it ran")
	}
	close(a.gate)
	waitText(t, fake, alice, "echo: hello")
	if got := a.Seen("hello"); got != "Be brief." {
		t.Errorf("the turn read instructions %q, want those set before it", got)
	}
}

// A stopped request stays stopped: /cancel drops the answer being
// written (its draft goes), says "Stopped.", and the user's next message
// reaches the model on its own, not glued to the stopped request.
func TestCancelledRequestStaysStopped(t *testing.T) {
	base := scriptedModel(0)
	chunks := make([]string, 4000)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("word%d ", i)
	}
	s := newStack(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "write a novel") {
			// Streams for minutes, unless stopped.
			return llmfake.Reply{Chunks: chunks, ChunkDelay: 20 * time.Millisecond}
		}
		return base(c)
	}, nil)
	s.start(nil)
	s.fake.Text(alice, alice, "write a novel")
	s.fake.WaitFor(t, 30*time.Second, "the answer's draft", func() bool {
		for _, m := range s.fake.Messages(alice) {
			if strings.HasPrefix(m.Plain, "word0 word1") && strings.HasSuffix(m.Plain, "▌") && !m.Deleted {
				return true
			}
		}
		return false
	})
	s.fake.Text(alice, alice, "/cancel")
	waitText(t, s.fake, alice, "Stopped.")
	for _, m := range s.fake.Messages(alice) {
		if strings.HasPrefix(m.Plain, "word0") && !m.Deleted {
			t.Errorf("the stopped answer's draft is still shown: %.60q", m.Plain)
		}
	}
	s.fake.Text(alice, alice, "what time is it")
	waitText(t, s.fake, alice, "You said: what time is it")
	calls := s.model.Calls()
	msgs := calls[len(calls)-1].Request.Messages
	n := len(msgs)
	if n < 4 || msgs[n-1].Role != "user" || msgs[n-1].Content != "what time is it" ||
		msgs[n-2].Role != "assistant" || !strings.Contains(msgs[n-2].Content, "stopped before it finished") ||
		msgs[n-3].Role != "user" || msgs[n-3].Content != "write a novel" {
		t.Errorf("after the stop the model read:\n%+v\nwant the stopped request, the note that closed it, then the new message alone", msgs)
	}
}
