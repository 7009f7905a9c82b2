package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// forum is the supergroup with topics of these tests.
const forum = -1001

// topicModel answers a forum's messages: it keeps nothing, and tells what
// a turn read of its conversation by quoting every word the user asked it
// to remember ("remember W") in the history it was sent.
type topicModel struct {
	mu   sync.Mutex
	hold chan struct{} // "block" waits on it
}

func (m *topicModel) handle(c llmfake.Call) llmfake.Reply {
	last := c.Request.Last()
	switch {
	case strings.Contains(last, "] Result:"):
		_, after, _ := strings.Cut(last, "] Result:")
		return llmfake.Text(complete("Tool said: " + firstLineOf(after)))
	case strings.Contains(last, "] Error:"):
		_, after, _ := strings.Cut(last, "] Error:")
		return llmfake.Text(complete("Tool failed: " + firstLineOf(after)))
	case strings.HasPrefix(last, "<answer>"):
		return llmfake.Text(complete("You picked " + strings.TrimSuffix(strings.TrimPrefix(last, "<answer>"), "</answer>")))
	case strings.Contains(last, "remember "):
		_, word, _ := strings.Cut(last, "remember ")
		return llmfake.Text(complete("Noted " + word))
	case strings.Contains(last, "what do you know"):
		var words []string
		for _, msg := range c.Request.Messages {
			if _, w, ok := strings.Cut(msg.Content, "remember "); ok && msg.Role == "user" {
				words = append(words, w)
			}
		}
		return llmfake.Text(complete(fmt.Sprintf("I know [%s]", strings.Join(words, " "))))
	case strings.Contains(last, "picture"):
		return llmfake.Text(useTool("echo", "image", `{}`))
	case strings.Contains(last, "report"):
		return llmfake.Text(useTool("echo", "report", `{}`))
	case strings.Contains(last, "add numbers"):
		return llmfake.Text(useTool("echo", "add", `{"a": 2, "b": 3}`))
	case strings.Contains(last, "please ask"):
		return llmfake.Text("<ask_followup_question>\n<question>Which city?</question>\n<options>[\"Paris\", \"Rome\"]</options>\n</ask_followup_question>")
	case strings.Contains(last, "a form"):
		return llmfake.Text(useTool("f", "ask", `{"message": "Go on?", "schema": {"type": "object", "properties": {}}}`))
	case strings.Contains(last, "long please"):
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "Paragraph %d of a long answer, which goes on for a while to fill the chat.\n\n", i)
		}
		return llmfake.Text(complete(b.String()))
	case strings.Contains(last, "stream please"):
		r := llmfake.Text("Here are streamed words, one after another, for the draft in the topic.").Split(4)
		r.ChunkDelay = 5 * time.Millisecond
		return r
	case strings.Contains(last, "block"):
		m.mu.Lock()
		defer m.mu.Unlock()
		return llmfake.Reply{Content: complete("unblocked"), Hold: m.hold}
	}
	return llmfake.Text(complete("Hello: " + last))
}

// newTopicStack is newTopicStackWith without changes to the agent.
func newTopicStack(t *testing.T) (*stack, *topicModel) {
	t.Helper()
	return newTopicStackWith(t, nil)
}

// newTopicStackWith is the stack with the test servers echo (image and report
// auto-approved, add not) and features as "f" (ask auto-approved), and a
// topicModel; edit changes the agent's options.
func newTopicStackWith(t *testing.T, edit func(*agent.Options)) (*stack, *topicModel) {
	t.Helper()
	tm := &topicModel{hold: make(chan struct{})}
	t.Cleanup(func() { close(tm.hold) })
	s := newUnstartedStack(t, map[string]any{
		"echo": testenv.EchoEntry(t, "image", "report"),
		"f":    testenv.FeaturesEntry(t, false, "ask"),
	}, tm.handle, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, func(_ *mcpgram.Profile, o *agent.Options) {
		o.FormPoll = 20 * time.Millisecond
		if edit != nil {
			edit(o)
		}
	})
	s.startAsking()
	return s, tm
}

// say sends text from user in a topic of chat, addressed to the bot.
func say(f *tgfake.Server, chat int64, topic int, user int64, text string) int {
	if !strings.HasPrefix(text, "/") {
		text = "@mcpgram_bot " + text
	}
	return f.Send(tgfake.Incoming{ChatID: chat, UserID: user, Text: text, Topic: topic})
}

// cardIn waits until the bot's message in a topic of chat containing
// want has buttons, and returns it.
func cardIn(t *testing.T, f *tgfake.Server, chat int64, topic int, want string) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	f.WaitFor(t, 30*time.Second, fmt.Sprintf("a card with %q in topic %d", want, topic), func() bool {
		for _, m := range f.MessagesIn(chat, topic) {
			if strings.Contains(m.Plain, want) && len(m.Keyboard) > 0 {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// everyKind has alice ask, in a topic of the forum, for every kind of
// answer: a photo, a tool's file, answer.md, an approval, a question and
// a server's form, each answered; it fails t unless each comes there.
func everyKind(t *testing.T, f *tgfake.Server, topic int) {
	t.Helper()
	say(f, forum, topic, alice, "picture")
	f.WaitIn(t, forum, topic, "Tool said: A tiny image")
	say(f, forum, topic, alice, "report")
	f.WaitIn(t, forum, topic, "Tool said: Your report")
	say(f, forum, topic, alice, "long please")
	f.WaitIn(t, forum, topic, "The answer goes on in answer.md above")

	say(f, forum, topic, alice, "add numbers")
	c := cardIn(t, f, forum, topic, "Approval needed")
	press(t, f, forum, alice, c, "✅ Approve")
	f.WaitIn(t, forum, topic, "Tool said: The sum of 2 and 3 is 5.")

	say(f, forum, topic, alice, "please ask")
	c = cardIn(t, f, forum, topic, "Which city?")
	press(t, f, forum, alice, c, "Rome")
	f.WaitIn(t, forum, topic, "You picked Rome")

	say(f, forum, topic, alice, "a form")
	c = cardIn(t, f, forum, topic, "f asks you, during ask")
	press(t, f, forum, alice, c, "✅ Submit")
	f.WaitIn(t, forum, topic, `Tool said: {"action":"accept","content":{}}`)
}

// Two topics of one forum are two conversations, each answered in its
// own topic: every answer, card (approval, question, form), status
// message, photo, document (answer.md, a tool's file) and chat action
// goes to the topic its message came from, and nothing to General; a
// turn in one topic never reads the other's conversation; /reset in one
// leaves the other.
func TestForumTopics(t *testing.T) {
	s, _ := newTopicStack(t)
	hs := s.start(func(o *bot.Options) { o.RateLimitPerMinute = 100 })
	f := s.fake
	seven, nine := f.CreateTopic(forum, "seven"), f.CreateTopic(forum, "nine")
	words := map[int]string{seven: "lapis", nine: "jade"}

	for _, topic := range []int{seven, nine} {
		say(f, forum, topic, alice, "remember "+words[topic])
		f.WaitIn(t, forum, topic, "Noted "+words[topic])
	}
	for _, topic := range []int{seven, nine} {
		t.Run(fmt.Sprintf("topic %d", topic), func(t *testing.T) {
			say(f, forum, topic, alice, "what do you know")
			f.WaitIn(t, forum, topic, fmt.Sprintf("I know [%s]", words[topic]))

			everyKind(t, f, topic)
			var photos, docs []string
			for _, m := range f.MessagesIn(forum, topic) {
				if m.Photo != nil {
					photos = append(photos, m.Caption)
				}
				if m.DocumentName != "" {
					docs = append(docs, m.DocumentName)
				}
			}
			if len(photos) != 1 || !slices.Contains(docs, "answer.md") || len(docs) != 2 {
				t.Errorf("topic %d got photos %q and documents %q; want the image, the report and answer.md", topic, photos, docs)
			}
			if f.ActionsIn(forum, topic) == 0 {
				t.Errorf("no chat action in topic %d", topic)
			}
		})
	}
	if got := f.MessagesIn(forum, 0); len(got) != 0 {
		t.Errorf("General got %d messages, want none:\n%s", len(got), f.Dump())
	}
	if got := f.ActionsIn(forum, 0); got != 0 {
		t.Errorf("General got %d chat actions, want none", got)
	}
	// Every call that may name a topic named one.
	for _, c := range f.Calls("") {
		switch c.Method {
		case "sendMessage", "sendPhoto", "sendDocument", "sendChatAction":
			if got := c.Params["message_thread_id"]; c.Params["chat_id"] == strconv.Itoa(forum) && got != strconv.Itoa(seven) && got != strconv.Itoa(nine) {
				t.Errorf("%s to the forum with message_thread_id %q, want a topic's", c.Method, got)
			}
		}
	}

	say(f, forum, seven, alice, "/reset")
	f.WaitIn(t, forum, seven, "Started a new conversation.")
	say(f, forum, seven, alice, "what do you know now")
	f.WaitIn(t, forum, seven, "I know []")
	say(f, forum, nine, alice, "what do you know still")
	f.WaitIn(t, forum, nine, "I know [jade]")
	if strings.Contains(hs.log.String(), "level=ERROR") {
		t.Errorf("errors in the log:\n%s", hs.log.String())
	}
}

// A forum whose admins chose /topics shared keeps one conversation for
// all its topics, each answer still in its message's topic; only an
// administrator may choose, and /topics separate gives each topic its own
// conversation back, where it was left.
func TestForumTopicsShared(t *testing.T) {
	s, _ := newTopicStack(t)
	s.start(nil)
	f := s.fake
	seven, nine := f.CreateTopic(forum, "seven"), f.CreateTopic(forum, "nine")
	say(f, forum, nine, alice, "remember jade")
	f.WaitIn(t, forum, nine, "Noted jade")

	say(f, forum, seven, alice, "/topics shared")
	f.WaitIn(t, forum, seven, "Only the group's administrators")
	say(f, forum, seven, alice, "/topics")
	f.WaitIn(t, forum, seven, "each topic is a conversation of its own")
	say(f, forum, seven, admin, "/topics shared")
	f.WaitIn(t, forum, seven, "all topics share one conversation")

	say(f, forum, seven, alice, "remember lapis")
	f.WaitIn(t, forum, seven, "Noted lapis")
	say(f, forum, nine, bob, "what do you know")
	f.WaitIn(t, forum, nine, "I know [lapis]")
	say(f, forum, 0, bob, "what do you know in General")
	f.WaitIn(t, forum, 0, "I know [lapis]")

	say(f, forum, nine, admin, "/topics separate")
	f.WaitIn(t, forum, nine, "each topic is a conversation of its own again")
	say(f, forum, nine, bob, "what do you know again")
	f.WaitIn(t, forum, nine, "I know [jade]")
	say(f, forum, seven, bob, "what do you know here")
	f.WaitIn(t, forum, seven, "I know []")
}

// An approval nobody answers in a topic expires there: its card says so,
// and the turn it ends answers in the topic, whether the topic is a
// conversation of its own or shares the group's.
func TestForumTopicExpiry(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared %v", shared), func(t *testing.T) {
			s, _ := newTopicStackWith(t, func(o *agent.Options) { o.ApprovalTimeout = 300 * time.Millisecond })
			s.start(nil)
			f := s.fake
			seven := f.CreateTopic(forum, "seven")
			if shared {
				say(f, forum, seven, admin, "/topics shared")
				f.WaitIn(t, forum, seven, "all topics share one conversation")
			}
			say(f, forum, seven, alice, "add numbers")
			c := cardIn(t, f, forum, seven, "Approval needed")
			edited(t, f, forum, c, "⌛ Expired: denied.")
			f.WaitIn(t, forum, seven, "Tool failed: The user denied this operation.")
			if got := f.MessagesIn(forum, 0); len(got) != 0 {
				t.Errorf("General got %d messages, want none:\n%s", len(got), f.Dump())
			}
		})
	}
}

// Telegram gives a reply in a group without topics the thread of replies
// it is in: that is no topic. The reply belongs to the group's one
// conversation, and its answer goes to the group itself.
func TestReplyThreadIsNoTopic(t *testing.T) {
	const group = -2002
	s, _ := newTopicStack(t)
	s.start(nil)
	f := s.fake
	say(f, group, 0, alice, "remember amber")
	m := f.WaitIn(t, group, 0, "Noted amber")
	reply := f.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "what do you know", ReplyTo: m.ID})
	got := f.WaitIn(t, group, 0, "I know [amber]")
	if got.ReplyTo != reply {
		t.Errorf("the answer replies to %d, want the reply %d", got.ReplyTo, reply)
	}
	for _, c := range f.Calls("") {
		if id := c.Params["message_thread_id"]; id != "" {
			t.Errorf("%s with message_thread_id %s in a group without topics", c.Method, id)
		}
	}
}

// A topic's turn runs beside another's, in a lane of its own, and
// /cancel stops only the turn of its topic. A topic closed or deleted
// while its turn runs ends the turn (the model's call still waiting),
// with a log line; the update is done, and the other topics go on.
func TestForumTopicGoneMidTurn(t *testing.T) {
	tests := []struct {
		name string
		gone func(f *tgfake.Server, topic int)
	}{
		{"closed", func(f *tgfake.Server, topic int) { f.CloseTopic(forum, topic) }},
		{"deleted", func(f *tgfake.Server, topic int) { f.DeleteTopic(forum, topic) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTopicStack(t)
			hs := s.start(nil)
			f := s.fake
			seven, nine := f.CreateTopic(forum, "seven"), f.CreateTopic(forum, "nine")
			say(f, forum, seven, alice, "block")
			testenv.Eventually(t, 30*time.Second, "the model call of topic seven", func() bool { return len(s.model.Calls()) == 1 })

			say(f, forum, nine, bob, "/cancel")
			f.WaitIn(t, forum, nine, "Nothing is running.")
			say(f, forum, nine, bob, "hello")
			f.WaitIn(t, forum, nine, "Hello: hello")

			tt.gone(f, seven)
			testenv.Eventually(t, 30*time.Second, "the log line of the topic gone", func() bool {
				return strings.Contains(hs.log.String(), "the topic was closed or deleted: its turn ended")
			})
			testenv.Eventually(t, 30*time.Second, "an empty inbox", func() bool {
				n, _, err := s.db.InboxBacklog(t.Context())
				return err == nil && n == 0
			})
			say(f, forum, nine, bob, "still here")
			f.WaitIn(t, forum, nine, "Hello: still here")
			if got := len(s.model.Calls()); got != 3 {
				t.Errorf("%d model calls, want 3: topic seven's, held, and topic nine's two", got)
			}
		})
	}
}

// A bot's private chat may have topics too (Bot API 9.3): a reply
// streams its draft, by sendMessageDraft or by an edited message, in the
// topic the message came from.
func TestTopicDrafts(t *testing.T) {
	tests := []struct {
		name   string
		drafts bool
	}{
		{"sendMessageDraft", true},
		{"an edited message", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newTopicStack(t)
			if tt.drafts {
				s.fake.EnableDrafts()
			}
			s.start(nil)
			f := s.fake
			ideas := f.CreateTopic(alice, "ideas")
			say(f, alice, ideas, alice, "stream please")
			f.WaitIn(t, alice, ideas, "for the draft in the topic.")
			streamed := len(f.DraftsIn(alice, ideas))
			for _, c := range f.Calls("sendMessage") {
				if c.Params["message_thread_id"] == strconv.Itoa(ideas) && strings.Contains(c.Params["text"], "▌") {
					streamed++
				}
			}
			if streamed == 0 {
				t.Errorf("no draft in the topic:\n%s", f.Dump())
			}
			if got := f.Drafts(alice); len(got) != 0 {
				t.Errorf("drafts outside the topic: %q", got)
			}
			if got := f.MessagesIn(alice, 0); len(got) != 0 {
				t.Errorf("%d messages outside the topic", len(got))
			}
		})
	}
}

// awayTopics is a store whose forum settings go away: while down, the
// conversation of a topic's message cannot be known.
type awayTopics struct {
	*sqlite.DB
	down atomic.Bool
}

func (d *awayTopics) ChatTopicsShared(ctx context.Context, chatID string) (bool, error) {
	if d.down.Load() {
		return false, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
	}
	return d.DB.ChatTopicsShared(ctx, chatID)
}

// While the database cannot say which conversation a topic's message
// belongs to, the message waits in the inbox, its sender told so once,
// and is answered in its topic once the database is back; /cancel, which
// needs no conversation, still stops its topic's turn.
func TestForumTopicDatabaseAway(t *testing.T) {
	s, _ := newTopicStack(t)
	away := &awayTopics{DB: s.db}
	startBotOn(t, s.fake, s.db, away, false, s.agent, s.hub, nil)
	f := s.fake
	seven, nine := f.CreateTopic(forum, "seven"), f.CreateTopic(forum, "nine")
	say(f, forum, seven, alice, "block")
	testenv.Eventually(t, 30*time.Second, "the model call of topic seven", func() bool { return len(s.model.Calls()) == 1 })

	away.down.Store(true)
	say(f, forum, nine, bob, "hello")
	f.WaitIn(t, forum, nine, "I cannot reach my database right now")
	say(f, forum, seven, alice, "/cancel")
	f.WaitIn(t, forum, seven, "Stopped.")
	away.down.Store(false)
	say(f, forum, nine, bob, "and then")
	f.WaitIn(t, forum, nine, "Hello: and then")
	f.WaitIn(t, forum, nine, "Hello: hello")
	if n := len(slices.DeleteFunc(f.MessagesIn(forum, nine), func(m tgfake.Message) bool {
		return !strings.Contains(m.Plain, "cannot reach my database")
	})); n != 1 {
		t.Errorf("told %d times that the database is away, want once", n)
	}
}
