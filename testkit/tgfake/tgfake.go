// Package tgfake is an in-process fake of the Telegram Bot API for tests.
// It speaks the real wire format (POST form, multipart or JSON to
// /bot<token>/<method>, answers {"ok":…}) and enforces the limits that bite
// in production: 4096 characters after entity parsing, 1024 per caption,
// 64-byte callback data, Telegram's HTML subset, "message is not modified",
// one poller at a time (409), and programmable 429s with retry_after. After
// setWebhook it posts updates to the webhook instead, with the secret token
// header, in order, retrying until the bot answers 2xx, and answers
// getUpdates 409 as Telegram does. Chats may be forums, with topics
// (see forum.go).
package tgfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// Token is the bot token the fake accepts.
const Token = "123456:TEST-token"

// BotUser is the bot's own account, as getMe reports it.
var BotUser = tgbotapi.User{ID: 123456, IsBot: true, FirstName: "mcpgram", UserName: "mcpgram_bot"}

// A Message is a message in a chat of the fake, sent by the bot or a user.
type Message struct {
	ID     int
	ChatID int64
	// Topic is the forum topic the message is in (its message_thread_id),
	// 0 for none; Thread is the message_thread_id a user's message
	// carries, which in a group without topics names the thread of
	// replies it is in, not a topic.
	Topic, Thread int
	FromID        int64
	// Text is what the bot sent (HTML source when ParseMode is HTML);
	// Plain is what the user sees (tags removed, entities decoded).
	Text, Plain string
	ParseMode   string
	Keyboard    [][]tgbotapi.InlineKeyboardButton
	// WebApps are the keyboard's web_app buttons (see WebApp).
	WebApps []WebApp
	Photo   []byte
	Caption string
	// Document and DocumentName are a file sent with sendDocument.
	Document     []byte
	DocumentName string
	Edits        int
	Deleted      bool
	ReplyTo      int
}

// Buttons returns the callback data of every button, row by row, as "text=data".
func (m Message) Buttons() []string {
	var out []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			data := ""
			if b.CallbackData != nil {
				data = *b.CallbackData
			}
			out = append(out, b.Text+"="+data)
		}
	}
	return out
}

// A CallbackAnswer is what the bot said to answerCallbackQuery.
type CallbackAnswer struct {
	Text      string
	ShowAlert bool
}

// A Call is one request the bot made.
type Call struct {
	Method string
	Params map[string]string
	At     time.Time
}

type failure struct {
	code       int
	desc       string
	retryAfter int
}

type callback struct {
	chatID   int64
	answered bool
	answer   CallbackAnswer
}

// A Server is a fake Bot API. Its methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	updates   []json.RawMessage
	updateIDs []int
	nextUpd   int
	confirmed int
	polling   bool
	nextMsg   map[int64]int
	msgs      map[int64][]*Message
	callbacks map[string]*callback
	nextCB    int
	calls     []Call
	fails     map[string][]failure
	commands  map[string][]tgbotapi.BotCommand // by scope JSON, "" for the default
	actions   map[place]int
	drafts    map[place][]string       // nil: sendMessageDraft unsupported (404)
	forums    map[int64]map[int]*topic // chat -> its topics, for a forum

	files     map[string]*upload       // by file_id
	admins    map[int64]map[int64]bool // chat -> its administrators
	nextFile  int
	downloads int

	hook       *webhook // set by setWebhook; nil while polling
	deliveries int
	hookErr    string
	hookErrAt  time.Time
}

// New starts a fake Bot API and stops it when t ends.
func New(t testing.TB) *Server {
	s := &Server{
		changed:   make(chan struct{}),
		nextUpd:   1000,
		nextMsg:   map[int64]int{},
		msgs:      map[int64][]*Message{},
		callbacks: map[string]*callback{},
		fails:     map[string][]failure{},
		actions:   map[place]int{},
		forums:    map[int64]map[int]*topic{},
		commands:  map[string][]tgbotapi.BotCommand{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	// Before the server closes: deliveries to a webhook end with the test.
	t.Cleanup(func() {
		s.mu.Lock()
		s.deleteWebhookLocked(nil)
		s.mu.Unlock()
	})
	return s
}

// URL is the base URL to use in place of https://api.telegram.org.
func (s *Server) URL() string { return s.srv.URL }

// Endpoint is the URL pattern tgbotapi.BotAPI.SetAPIEndpoint takes.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Fail makes the next n calls of method fail with code and description;
// retryAfter > 0 adds parameters.retry_after (use 429 for flood control).
func (s *Server) Fail(method string, n, code int, desc string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails[method] = append(s.fails[method], failure{code, desc, retryAfter})
	}
}

// FloodWait makes the next call of method answer 429 with retry_after seconds.
func (s *Server) FloodWait(method string, retryAfter int) {
	s.Fail(method, 1, http.StatusTooManyRequests, fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), retryAfter)
}

// An Incoming describes a message a user sends to the bot.
type Incoming struct {
	ChatID int64 // > 0: private chat with the user; < 0: a supergroup
	UserID int64
	Text   string
	// ReplyTo is the id of a message in the chat this one replies to. In
	// a supergroup without topics the message then carries the thread of
	// replies it is in (message_thread_id, without is_topic_message), as
	// Telegram's do.
	ReplyTo int
	// Topic is the forum topic the message is written in (see
	// CreateTopic); 0 is the chat itself, a forum's General topic.
	Topic int
}

// Send queues a user message as an update and returns its message id.
func (s *Server) Send(in Incoming) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	chat := s.chatLocked(in.ChatID)
	user := &tgbotapi.User{ID: in.UserID, FirstName: fmt.Sprintf("user%d", in.UserID), UserName: fmt.Sprintf("user%d", in.UserID)}
	id := s.newMsgIDLocked(in.ChatID)
	m := &tgbotapi.Message{MessageID: id, From: user, Date: int(time.Now().Unix()), Chat: chat, Text: in.Text, Entities: entities(in.Text)}
	sent := &Message{ID: id, ChatID: in.ChatID, FromID: in.UserID, Text: in.Text, Plain: in.Text, ReplyTo: in.ReplyTo, Topic: in.Topic, Thread: in.Topic}
	if in.ReplyTo != 0 {
		for _, old := range s.msgs[in.ChatID] {
			if old.ID == in.ReplyTo {
				m.ReplyToMessage = s.wireLocked(old)
				if in.ChatID < 0 && s.forums[in.ChatID] == nil {
					sent.Thread = cmp.Or(old.Thread, old.ID)
				}
			}
		}
	}
	s.msgs[in.ChatID] = append(s.msgs[in.ChatID], sent)
	s.queueLocked(tgbotapi.Update{Message: m}, "message", sent)
	return id
}

// Text is Send for a plain message with no reply.
func (s *Server) Text(chatID, userID int64, text string) int {
	return s.Send(Incoming{ChatID: chatID, UserID: userID, Text: text})
}

// Press queues a callback query: userID pressed the button with data on
// message messageID of chatID. The data need not be on the message, so
// tests can forge presses. It returns the callback query id.
func (s *Server) Press(chatID, userID int64, messageID int, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextCB++
	id := fmt.Sprintf("cb%d", s.nextCB)
	s.callbacks[id] = &callback{chatID: chatID}
	var msg *tgbotapi.Message
	var pressed *Message
	for _, m := range s.msgs[chatID] {
		if m.ID == messageID {
			msg, pressed = s.wireLocked(m), m
		}
	}
	if msg == nil {
		msg = &tgbotapi.Message{MessageID: messageID, Chat: s.chatLocked(chatID), From: &BotUser}
	}
	user := &tgbotapi.User{ID: userID, FirstName: fmt.Sprintf("user%d", userID)}
	s.queueLocked(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{ID: id, From: user, Message: msg, ChatInstance: "ci", Data: data}}, "callback_query", pressed)
	return id
}

// Answer returns how the bot answered callback query id, if it did.
func (s *Server) Answer(id string) (CallbackAnswer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cb := s.callbacks[id]
	if cb == nil || !cb.answered {
		return CallbackAnswer{}, false
	}
	return cb.answer, true
}

// Messages returns a snapshot of the bot's live (not deleted) messages in chatID.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs[chatID] {
		if m.FromID == BotUser.ID && !m.Deleted {
			out = append(out, *m)
		}
	}
	return out
}

// Count is how many of the bot's live messages in chatID hold text.
func (s *Server) Count(chatID int64, text string) int {
	n := 0
	for _, m := range s.Messages(chatID) {
		if strings.Contains(m.Plain, text) {
			n++
		}
	}
	return n
}

// Calls returns the requests made to method ("" for all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Actions returns how many chat actions were sent to chatID, in any of
// its topics.
func (s *Server) Actions(chatID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.actions {
		if p.chat == chatID {
			n += c
		}
	}
	return n
}

// EnableDrafts makes the fake support sendMessageDraft (Bot API 9.3+);
// without it the method is unknown (404), as on older API servers.
func (s *Server) EnableDrafts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drafts = map[place][]string{}
}

// Drafts returns the visible text of each draft frame streamed to chatID
// (outside any topic).
func (s *Server) Drafts(chatID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.drafts[place{chatID, 0}]...)
}

// Unconfirmed returns how many updates the bot has not yet confirmed.
func (s *Server) Unconfirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// WaitText waits until a final message (not a streamed draft, which ends
// in "▌") in chat shows want, and returns it; it fails t after 30 s.
func (s *Server) WaitText(t testing.TB, chat int64, want string) Message {
	t.Helper()
	var got Message
	s.WaitFor(t, 30*time.Second, fmt.Sprintf("a message containing %q in chat %d", want, chat), func() bool {
		for _, m := range s.Messages(chat) {
			if strings.Contains(m.Plain, want) && !strings.HasSuffix(m.Plain, "▌") {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// WaitFor waits until cond (called with the lock free) is true, failing t
// after timeout with a dump of what the bot sent.
func (s *Server) WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.Waiter{Changed: s.changes, Explain: s.Dump}.Eventually(t, timeout, what, cond)
}

// changes returns a channel closed at the server's next change.
func (s *Server) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Dump describes every chat, for test failures.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for chat, msgs := range s.msgs {
		fmt.Fprintf(&b, "chat %d:\n", chat)
		for _, m := range msgs {
			fmt.Fprintf(&b, "  #%d topic %d from %d del=%v: %q %v\n", m.ID, m.Topic, m.FromID, m.Deleted, m.Plain, Message.Buttons(*m))
		}
	}
	return b.String()
}

// chatLocked is the chat id as updates show it.
func (s *Server) chatLocked(id int64) *tgbotapi.Chat {
	if id > 0 {
		return &tgbotapi.Chat{ID: id, Type: "private"}
	}
	return &tgbotapi.Chat{ID: id, Type: "supergroup", Title: "group"}
}

// entities marks a leading /command and @mentions, as Telegram's clients do.
func entities(text string) []tgbotapi.MessageEntity {
	var out []tgbotapi.MessageEntity
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		out = append(out, tgbotapi.MessageEntity{Type: "bot_command", Offset: 0, Length: Len(cmd)})
	}
	for i := 0; i < len(text); i++ {
		if text[i] == '@' && (i == 0 || text[i-1] == ' ') {
			j := i + 1
			for j < len(text) && text[j] != ' ' {
				j++
			}
			out = append(out, tgbotapi.MessageEntity{Type: "mention", Offset: Len(text[:i]), Length: Len(text[i:j])})
		}
	}
	return out
}

func (s *Server) newMsgIDLocked(chat int64) int {
	s.nextMsg[chat]++
	return s.nextMsg[chat]
}

// queueLocked queues u, whose field kind ("message", "callback_query")
// holds m's wire form (m may be nil): with m's topic and thread, which
// the library's types cannot hold.
func (s *Server) queueLocked(u tgbotapi.Update, kind string, m *Message) {
	u.UpdateID = s.nextUpd
	s.nextUpd++
	b, err := json.Marshal(u)
	if err != nil {
		panic(err)
	}
	b = wireThread(b, kind, m)
	s.updates = append(s.updates, b)
	s.updateIDs = append(s.updateIDs, u.UpdateID)
	s.notifyLocked()
}

func (s *Server) wireLocked(m *Message) *tgbotapi.Message {
	from := &BotUser
	if m.FromID != BotUser.ID {
		from = &tgbotapi.User{ID: m.FromID, FirstName: fmt.Sprintf("user%d", m.FromID)}
	}
	w := &tgbotapi.Message{MessageID: m.ID, From: from, Date: int(time.Now().Unix()), Chat: s.chatLocked(m.ChatID), Text: m.Plain, Caption: m.Caption}
	if m.Keyboard != nil {
		w.ReplyMarkup = &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: m.Keyboard}
	}
	if m.Photo != nil {
		w.Photo = []tgbotapi.PhotoSize{{FileID: fmt.Sprintf("photo%d", m.ID), FileUniqueID: "u", Width: 1, Height: 1}}
	}
	return w
}

// fileNameKey prefixes the parameter that holds an uploaded file's name;
// no Bot API parameter starts so.
const fileNameKey = "\x00filename:"

var notModified = badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
