package updates_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/bot/updates"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "s3cret_token-1"

// intake is a Receiver over a real inbox, taking updates both ways: by
// polling the fake, and as the handler of a webhook server.
type intake struct {
	fake *tgfake.Server
	db   *sqlite.DB
	log  *testenv.Buffer
	hook *httptest.Server
	rcv  *updates.Receiver
}

// newIntake starts an intake; inbox, when set, wraps the store.
func newIntake(t testing.TB, wrap func(updates.Inbox) updates.Inbox) *intake {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "mcpgram.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	in := &intake{fake: tgfake.New(t), db: db, log: &testenv.Buffer{}}
	var inbox updates.Inbox = db
	if wrap != nil {
		inbox = wrap(db)
	}
	logger := slog.New(slog.NewTextHandler(in.log, nil))
	tg := telegram.New(tgfake.Token, in.fake.URL(), telegram.Options{PollTimeout: time.Second,
		RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: logger})
	t.Cleanup(tg.Close)
	in.rcv = updates.New(tg, inbox, func(int64) {}, updates.Options{Secret: secret,
		PollTimeout: time.Second, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Logger: logger})
	in.hook = httptest.NewServer(in.rcv)
	t.Cleanup(in.hook.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); in.rcv.Poll(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return in
}

// poll queues update at the fake and waits until the Receiver confirmed
// it, returning its update id.
func (in *intake) poll(t testing.TB, update []byte) int64 {
	t.Helper()
	id, err := in.fake.Raw(update)
	if err != nil {
		t.Fatalf("queue %s: %v", update, err)
	}
	in.fake.WaitFor(t, 30*time.Second, "the update confirmed", func() bool { return in.fake.Unconfirmed() == 0 })
	return int64(id)
}

// post sends update as Telegram's webhook request and returns the status.
func (in *intake) post(t testing.TB, update []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, in.hook.URL, strings.NewReader(string(update)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// stored reports whether the inbox holds update id.
func (in *intake) stored(t testing.TB, id int64) bool {
	t.Helper()
	items, err := in.db.InboxQueued(context.Background(), id-1, 1)
	if err != nil {
		t.Fatalf("read inbox: %v", err)
	}
	return len(items) == 1 && items[0].UpdateID == id
}

// dropped reports whether the log says update id was dropped.
func (in *intake) dropped(id int64) bool {
	for _, line := range strings.Split(in.log.String(), "\n") {
		if strings.Contains(line, fmt.Sprintf("update_id=%d ", id)) && strings.Contains(line, "dropped") {
			return true
		}
	}
	return false
}

// checkTaken fails t unless update id was stored, or dropped with a log
// line.
func (in *intake) checkTaken(t testing.TB, id int64, update []byte) {
	t.Helper()
	if !in.stored(t, id) && !in.dropped(id) {
		t.Errorf("update %d was neither stored nor dropped with a log line: %s\nlog:\n%s", id, update, in.log.String())
	}
}

// withID puts id as the update_id of update.
func withID(t testing.TB, update []byte, id int64) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(update, &m); err != nil {
		t.Fatal(err)
	}
	m["update_id"] = json.RawMessage(fmt.Sprint(id))
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A callback query from a button on an inline-mode message has no
// message: it is stored (with no chat) by both paths, and the intake goes
// on with the next update.
func TestCallbackWithoutMessage(t *testing.T) {
	in := newIntake(t, nil)
	var inline []byte
	for _, k := range tgfake.Kinds {
		if k.Name == "callback_query_inline" {
			inline = []byte(k.Example)
		}
	}
	next := []byte(`{"message":{"message_id":1,"date":1,"chat":{"id":2,"type":"private"},"from":{"id":2},"text":"next"}}`)

	id := in.poll(t, inline)
	if !in.stored(t, id) {
		t.Errorf("polling: the inline button's press was not stored\nlog:\n%s", in.log.String())
	}
	if id := in.poll(t, next); !in.stored(t, id) {
		t.Errorf("polling: the update after it was not stored")
	}

	for _, id := range []int64{500, 501} {
		body := withID(t, inline, id)
		if id == 501 {
			body = withID(t, next, id)
		}
		if code := in.post(t, body); code != http.StatusOK || !in.stored(t, id) {
			t.Errorf("webhook: update %d answered %d, stored %v; want 200 and stored", id, code, in.stored(t, id))
		}
	}
}

// Every update kind Telegram defines, whole and with any one field
// absent, is stored or dropped with a log line by both paths, and each
// is confirmed (so none comes back after a restart).
func TestEveryKindAnyFieldAbsent(t *testing.T) {
	in := newIntake(t, nil)
	var all [][]byte
	for _, k := range tgfake.Kinds {
		variants, err := tgfake.Omissions([]byte(k.Example))
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		all = append(all, []byte(k.Example))
		all = append(all, variants...)
	}
	ids := make([]int, len(all))
	for i, u := range all {
		var err error
		if ids[i], err = in.fake.Raw(u); err != nil {
			t.Fatal(err)
		}
	}
	in.fake.WaitFor(t, 60*time.Second, "every update confirmed", func() bool { return in.fake.Unconfirmed() == 0 })
	for i, u := range all {
		in.checkTaken(t, int64(ids[i]), u)
	}

	for i, u := range all {
		id := int64(1_000_000 + i)
		if code := in.post(t, withID(t, u, id)); code != http.StatusOK {
			t.Errorf("webhook: %s answered %d, want 200", u, code)
		}
		in.checkTaken(t, id, u)
	}
	if t.Failed() {
		return
	}
	t.Logf("%d updates of %d kinds, each through both paths", len(all), len(tgfake.Kinds))
}

// An update whose fields have types this library does not expect (a newer
// Bot API, or a broken one) is dropped with a log line, not retried for
// ever, and the updates behind it go in.
func TestUndecodableUpdateDropped(t *testing.T) {
	in := newIntake(t, nil)
	bad := []byte(`{"message":{"message_id":"seven","chat":{"id":2,"type":"private"},"date":1,"text":"x"}}`)
	good := []byte(`{"message":{"message_id":1,"date":1,"chat":{"id":2,"type":"private"},"from":{"id":2},"text":"next"}}`)
	if _, err := in.fake.Raw(bad); err != nil {
		t.Fatal(err)
	}
	id := in.poll(t, good)
	if !in.dropped(id-1) || in.stored(t, id-1) {
		t.Errorf("polling: the undecodable update was not dropped with a log line\nlog:\n%s", in.log.String())
	}
	if !in.stored(t, id) {
		t.Errorf("polling: the update behind it was not stored")
	}
	if code := in.post(t, withID(t, bad, 900)); code != http.StatusOK || !in.dropped(900) {
		t.Errorf("webhook: answered %d, dropped %v; want 200 and a log line", code, in.dropped(900))
	}
}

// panicky is an inbox that panics when asked to store one update.
type panicky struct {
	updates.Inbox
	mu    sync.Mutex
	bad   int64
	calls int
}

func (p *panicky) InboxPut(ctx context.Context, items ...store.InboxItem) error {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	for _, it := range items {
		if it.UpdateID == p.bad || strings.Contains(string(it.Payload), `"panic"`) {
			panic("boom")
		}
	}
	return p.Inbox.InboxPut(ctx, items...)
}

// A panic while taking one update in does not stop the intake: that update
// is dropped with a log line and confirmed, and the next ones go in.
func TestPanicDoesNotStopIntake(t *testing.T) {
	p := &panicky{}
	in := newIntake(t, func(db updates.Inbox) updates.Inbox { p.Inbox = db; return p })
	poison := []byte(`{"message":{"message_id":1,"date":1,"chat":{"id":2,"type":"private"},"from":{"id":2},"text":"panic"}}`)
	good := []byte(`{"message":{"message_id":2,"date":1,"chat":{"id":2,"type":"private"},"from":{"id":2},"text":"fine"}}`)
	// In one batch: the poison one first.
	first, err := in.fake.Raw(poison)
	if err != nil {
		t.Fatal(err)
	}
	second := in.poll(t, good)
	if !in.dropped(int64(first)) || in.stored(t, int64(first)) {
		t.Errorf("polling: the update that panicked was not dropped with a log line\nlog:\n%s", in.log.String())
	}
	if !in.stored(t, second) {
		t.Errorf("polling: the update after the panic was not stored\nlog:\n%s", in.log.String())
	}

	if code := in.post(t, withID(t, poison, 700)); code != http.StatusOK || !in.dropped(700) {
		t.Errorf("webhook: the update that panicked answered %d, dropped %v; want 200 and a log line", code, in.dropped(700))
	}
	if code := in.post(t, withID(t, good, 701)); code != http.StatusOK || !in.stored(t, 701) {
		t.Errorf("webhook: the next update answered %d", code)
	}
}

// Decode leaves out the entities that do not lie within their text, on
// which the library's command methods would panic, and keeps the others.
func TestDecodeEntities(t *testing.T) {
	raw := `{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":2,"type":"private"},"text":"/go 😀",
		"entities":[{"type":"bot_command","offset":0,"length":3},{"type":"bold","offset":4,"length":2},{"type":"bold","offset":4,"length":3}],
		"reply_to_message":{"message_id":0,"date":1,"chat":{"id":2,"type":"private"},"text":"","entities":[{"type":"bot_command","offset":0,"length":6}]}}}`
	u, err := updates.Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(u.Message.Entities); got != 2 || u.Message.Command() != "go" {
		t.Errorf("entities %+v, command %q; want the command and the emoji's bold", u.Message.Entities, u.Message.Command())
	}
	if r := u.Message.ReplyToMessage; r.Entities != nil || r.Command() != "" {
		t.Errorf("the reply's entity beyond its text was kept: %+v", r.Entities)
	}
}

// Topic finds the forum topic of a message or of a pressed button's
// message by is_topic_message, never by a thread id alone: a reply in a
// group without topics carries the thread it continues.
func TestTopic(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want int
	}{
		{"a message in a topic", `{"update_id":1,"message":{"message_id":9,"message_thread_id":7,"is_topic_message":true,"chat":{"id":-100,"type":"supergroup","is_forum":true}}}`, 7},
		{"a press in a topic", `{"update_id":1,"callback_query":{"id":"c","message":{"message_id":9,"message_thread_id":9,"is_topic_message":true,"chat":{"id":-100,"type":"supergroup"}}}}`, 9},
		{"a reply in a group without topics", `{"update_id":1,"message":{"message_id":9,"message_thread_id":4,"chat":{"id":-100,"type":"supergroup"},"reply_to_message":{"message_id":4}}}`, 0},
		{"a message in General", `{"update_id":1,"message":{"message_id":9,"chat":{"id":-100,"type":"supergroup","is_forum":true}}}`, 0},
		{"a private chat", `{"update_id":1,"message":{"message_id":9,"chat":{"id":5,"type":"private"}}}`, 0},
		{"a press on a message without topics", `{"update_id":1,"callback_query":{"id":"c","message":{"message_id":9,"message_thread_id":3,"chat":{"id":-100,"type":"supergroup"}}}}`, 0},
		{"a topic marked but with no thread", `{"update_id":1,"message":{"message_id":9,"is_topic_message":true,"chat":{"id":-100,"type":"supergroup"}}}`, 0},
		{"not JSON", `{"update_id":`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := updates.Topic([]byte(tt.raw)); got != tt.want {
				t.Errorf("Topic = %d, want %d", got, tt.want)
			}
		})
	}
}
