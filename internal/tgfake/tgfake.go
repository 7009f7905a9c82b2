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
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
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
	Photo       []byte
	Caption     string
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

// scopeKey is the key of the menus of the BotCommandScope JSON raw: "" for
// the default, "chat:ID" and "chat_administrators:ID" for one chat's, the
// scope's type for those of every chat of a kind. s.mu is held.
func (s *Server) scopeKey(raw string) (string, *apiError) {
	if raw == "" {
		return "", nil
	}
	var scope tgbotapi.BotCommandScope
	if err := json.Unmarshal([]byte(raw), &scope); err != nil {
		return "", badRequest("can't parse BotCommandScope JSON object")
	}
	switch scope.Type {
	case "default":
		return "", nil
	case "chat", "chat_administrators":
		if len(s.msgs[scope.ChatID]) == 0 {
			return "", badRequest("chat not found")
		}
		return fmt.Sprintf("%s:%d", scope.Type, scope.ChatID), nil
	}
	return scope.Type, nil
}

// ChatAdminCommands returns the commands set with setMyCommands for the
// administrators of the group chatID (scope chat_administrators).
func (s *Server) ChatAdminCommands(chatID int64) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tgbotapi.BotCommand(nil), s.commands[fmt.Sprintf("chat_administrators:%d", chatID)]...)
}

// Commands returns the commands set with setMyCommands (and not deleted
// since with deleteMyCommands) for the default scope, or for one chat
// when chatID is not 0.
func (s *Server) Commands(chatID int64) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ""
	if chatID != 0 {
		key = fmt.Sprintf("chat:%d", chatID)
	}
	return append([]tgbotapi.BotCommand(nil), s.commands[key]...)
}

// ScopeCommands returns the commands set with setMyCommands for a scope
// of every chat of a kind: all_private_chats, all_group_chats or
// all_chat_administrators.
func (s *Server) ScopeCommands(scope string) []tgbotapi.BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tgbotapi.BotCommand(nil), s.commands[scope]...)
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
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("tgfake: timed out after %v waiting for %s\n%s", timeout, what, s.Dump())
		}
	}
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

// apiError is an {"ok":false} answer.
type apiError struct {
	code       int
	desc       string
	retryAfter int
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{code: 400, desc: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/") {
		s.serveFile(w, r)
		return
	}
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "bot") {
		writeErr(w, &apiError{code: 404, desc: "Not Found"})
		return
	}
	if parts[0] != "bot"+Token {
		writeErr(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	method := parts[1]
	params, files, err := readParams(r)
	if err != nil {
		writeErr(w, badRequest("%v", err))
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Params: params, At: time.Now()})
	if q := s.fails[method]; len(q) > 0 {
		f := q[0]
		s.fails[method] = q[1:]
		s.notifyLocked()
		s.mu.Unlock()
		writeErr(w, &apiError{code: f.code, desc: f.desc, retryAfter: f.retryAfter})
		return
	}
	s.mu.Unlock()

	var result any
	var aerr *apiError
	switch method {
	case "getUpdates":
		result, aerr = s.getUpdates(r, params)
	case "getMe":
		result = BotUser
	default:
		s.mu.Lock()
		result, aerr = s.handleLocked(method, params, files)
		s.notifyLocked()
		s.mu.Unlock()
	}
	if aerr != nil {
		writeErr(w, aerr)
		return
	}
	b, err := json.Marshal(result)
	if err != nil {
		writeErr(w, &apiError{code: 500, desc: "Internal Server Error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"ok":true,"result":%s}`, b)
}

func writeErr(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(body)
}

// fileNameKey prefixes the parameter that holds an uploaded file's name;
// no Bot API parameter starts so.
const fileNameKey = "\x00filename:"

// readParams flattens form, multipart or JSON parameters into strings, as
// Telegram treats them (JSON objects become their JSON text).
func readParams(r *http.Request) (map[string]string, map[string][]byte, error) {
	params := map[string]string{}
	files := map[string][]byte{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return nil, nil, fmt.Errorf("invalid JSON: %w", err)
		}
		for k, v := range body {
			switch v := v.(type) {
			case string:
				params[k] = v
			default:
				b, _ := json.Marshal(v)
				params[k] = string(b)
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(32 << 20); err != nil {
			return nil, nil, err
		}
		for k, v := range r.MultipartForm.Value {
			params[k] = v[0]
		}
		for k, fhs := range r.MultipartForm.File {
			f, err := fhs[0].Open()
			if err != nil {
				return nil, nil, err
			}
			b, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				return nil, nil, err
			}
			files[k] = b
			params[fileNameKey+k] = fhs[0].Filename
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, nil, err
		}
		for k, v := range r.Form {
			params[k] = v[0]
		}
	}
	return params, files, nil
}

func (s *Server) getUpdates(r *http.Request, p map[string]string) (any, *apiError) {
	offset, _ := strconv.Atoi(p["offset"])
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	s.mu.Lock()
	if s.hook != nil {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
	}
	if s.polling {
		s.mu.Unlock()
		return nil, &apiError{code: 409, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	}
	s.polling = true
	defer func() {
		s.mu.Lock()
		s.polling = false
		s.mu.Unlock()
	}()
	if offset > 0 {
		// An offset confirms every update below it: Telegram forgets them.
		n := 0
		for n < len(s.updateIDs) && s.updateIDs[n] < offset {
			n++
		}
		s.updates, s.updateIDs = s.updates[n:], s.updateIDs[n:]
		if offset > s.confirmed {
			s.confirmed = offset
		}
	}
	deadline := time.After(time.Duration(timeout) * time.Second)
	for len(s.updates) == 0 && timeout > 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			timeout = 0
		case <-r.Context().Done():
			return []json.RawMessage{}, nil
		}
		s.mu.Lock()
	}
	n := min(limit, len(s.updates))
	out := append([]json.RawMessage{}, s.updates[:n]...)
	s.mu.Unlock()
	return out, nil
}

func (s *Server) chatID(p map[string]string) (int64, *apiError) {
	id, err := strconv.ParseInt(p["chat_id"], 10, 64)
	if err != nil || id == 0 {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

func (s *Server) findLocked(chat int64, p map[string]string) *Message {
	id, _ := strconv.Atoi(p["message_id"])
	for _, m := range s.msgs[chat] {
		if m.ID == id && m.FromID == BotUser.ID && !m.Deleted {
			return m
		}
	}
	return nil
}

// parseText applies parse_mode and the length limit.
func parseText(text, mode string, limit int, what string) (string, *apiError) {
	plain := text
	switch strings.ToLower(mode) {
	case "":
	case "html":
		var err error
		if plain, err = ParseHTML(text); err != nil {
			return "", badRequest("%v", err)
		}
	default:
		return "", badRequest("unsupported parse_mode %q in this fake", mode)
	}
	plain = strings.TrimSpace(plain)
	if what == "text" && plain == "" {
		return "", badRequest("message text is empty")
	}
	if Len(plain) > limit {
		if what == "caption" {
			return "", badRequest("message caption is too long")
		}
		return "", badRequest("message is too long")
	}
	return plain, nil
}

func parseKeyboard(raw string) ([][]tgbotapi.InlineKeyboardButton, *apiError) {
	if raw == "" || raw == "null" {
		return nil, nil
	}
	var mk tgbotapi.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	for _, row := range mk.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return nil, badRequest("BUTTON_TEXT_EMPTY")
			}
			if b.CallbackData == nil && b.URL == nil {
				return nil, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
			}
			if b.CallbackData != nil && (len(*b.CallbackData) == 0 || len(*b.CallbackData) > 64) {
				return nil, badRequest("BUTTON_DATA_INVALID")
			}
		}
	}
	if len(mk.InlineKeyboard) == 0 {
		return [][]tgbotapi.InlineKeyboardButton{}, nil
	}
	return mk.InlineKeyboard, nil
}

func sameKeyboard(a, b [][]tgbotapi.InlineKeyboardButton) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return string(x) == string(y)
}

var notModified = badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")

func (s *Server) handleLocked(method string, p map[string]string, files map[string][]byte) (any, *apiError) {
	switch method {
	case "getFile":
		return s.getFileLocked(p)
	case "getChatMember":
		return s.getChatMemberLocked(p)
	case "setWebhook":
		return s.setWebhookLocked(p)
	case "deleteWebhook":
		s.deleteWebhookLocked(p)
		return true, nil
	case "getWebhookInfo":
		return s.webhookInfoLocked(), nil
	case "sendMessage", "sendPhoto", "sendDocument":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		kb, e := parseKeyboard(p["reply_markup"])
		if e != nil {
			return nil, e
		}
		thread, e := s.threadLocked(chat, p)
		if e != nil {
			return nil, e
		}
		m := &Message{ChatID: chat, FromID: BotUser.ID, ParseMode: p["parse_mode"], Keyboard: kb, Topic: thread, Thread: thread}
		m.ReplyTo, _ = strconv.Atoi(p["reply_to_message_id"])
		if method == "sendMessage" {
			if m.Plain, e = parseText(p["text"], p["parse_mode"], 4096, "text"); e != nil {
				return nil, e
			}
			m.Text = p["text"]
		} else if method == "sendDocument" {
			if len(files["document"]) == 0 {
				return nil, badRequest("there is no document in the request")
			}
			if len(files["document"]) > 50<<20 {
				return nil, &apiError{code: 413, desc: "Request Entity Too Large"}
			}
			if m.Plain, e = parseText(p["caption"], p["parse_mode"], 1024, "caption"); e != nil {
				return nil, e
			}
			m.Document, m.DocumentName, m.Caption, m.Text = files["document"], p[fileNameKey+"document"], m.Plain, p["caption"]
		} else {
			photo := files["photo"]
			if len(photo) == 0 {
				return nil, badRequest("there is no photo in the request")
			}
			if m.Plain, e = parseText(p["caption"], p["parse_mode"], 1024, "caption"); e != nil {
				return nil, e
			}
			m.Photo, m.Caption, m.Text = photo, m.Plain, p["caption"]
		}
		m.ID = s.newMsgIDLocked(chat)
		s.msgs[chat] = append(s.msgs[chat], m)
		return s.wireLocked(m), nil
	case "editMessageText":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		m := s.findLocked(chat, p)
		if m == nil {
			return nil, badRequest("message to edit not found")
		}
		plain, e := parseText(p["text"], p["parse_mode"], 4096, "text")
		if e != nil {
			return nil, e
		}
		kb, e := parseKeyboard(p["reply_markup"])
		if e != nil {
			return nil, e
		}
		if plain == m.Plain && sameKeyboard(kb, m.Keyboard) {
			return nil, notModified
		}
		m.Text, m.Plain, m.ParseMode, m.Keyboard = p["text"], plain, p["parse_mode"], kb
		m.Edits++
		return s.wireLocked(m), nil
	case "editMessageReplyMarkup":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		m := s.findLocked(chat, p)
		if m == nil {
			return nil, badRequest("message to edit not found")
		}
		kb, e := parseKeyboard(p["reply_markup"])
		if e != nil {
			return nil, e
		}
		if sameKeyboard(kb, m.Keyboard) {
			return nil, notModified
		}
		m.Keyboard = kb
		m.Edits++
		return s.wireLocked(m), nil
	case "deleteMessage":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		m := s.findLocked(chat, p)
		if m == nil {
			return nil, badRequest("message to delete not found")
		}
		m.Deleted = true
		return true, nil
	case "answerCallbackQuery":
		cb := s.callbacks[p["callback_query_id"]]
		if cb == nil || cb.answered {
			return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
		}
		if Len(p["text"]) > 200 {
			return nil, badRequest("MESSAGE_TOO_LONG")
		}
		cb.answered = true
		cb.answer = CallbackAnswer{Text: p["text"], ShowAlert: p["show_alert"] == "true"}
		return true, nil
	case "sendChatAction":
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		if p["action"] == "" {
			return nil, badRequest("wrong parameter action in request")
		}
		thread, e := s.threadLocked(chat, p)
		if e != nil {
			return nil, e
		}
		s.actions[place{chat, thread}]++
		return true, nil
	case "sendMessageDraft":
		if s.drafts == nil {
			break
		}
		chat, e := s.chatID(p)
		if e != nil {
			return nil, e
		}
		if chat < 0 {
			return nil, badRequest("draft can be sent only to private chats")
		}
		thread, e := s.threadLocked(chat, p)
		if e != nil {
			return nil, e
		}
		if id, _ := strconv.ParseInt(p["draft_id"], 10, 64); id == 0 {
			return nil, badRequest("draft_id must be non-zero")
		}
		plain := p["text"]
		if strings.EqualFold(p["parse_mode"], "html") {
			var err error
			if plain, err = ParseHTML(p["text"]); err != nil {
				return nil, badRequest("%v", err)
			}
		}
		if Len(plain) > 4096 {
			return nil, badRequest("message is too long")
		}
		s.drafts[place{chat, thread}] = append(s.drafts[place{chat, thread}], plain)
		return true, nil
	case "setMyCommands":
		var cmds []tgbotapi.BotCommand
		if err := json.Unmarshal([]byte(p["commands"]), &cmds); err != nil {
			return nil, badRequest("can't parse commands JSON object")
		}
		for _, c := range cmds {
			if c.Command == "" || len(c.Command) > 32 || strings.ToLower(c.Command) != c.Command || len(c.Description) < 1 || len(c.Description) > 256 {
				return nil, badRequest("BOT_COMMAND_INVALID")
			}
		}
		key, err := s.scopeKey(p["scope"])
		if err != nil {
			return nil, err
		}
		s.commands[key] = cmds
		return true, nil
	case "deleteMyCommands":
		key, err := s.scopeKey(p["scope"])
		if err != nil {
			return nil, err
		}
		delete(s.commands, key)
		return true, nil
	}
	return nil, &apiError{code: 404, desc: "Not Found"}
}
