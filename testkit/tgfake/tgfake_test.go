package tgfake_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

func newAPI(t *testing.T, fake *tgfake.Server) *tgbotapi.BotAPI {
	t.Helper()
	api, err := tgbotapi.NewBotAPIWithClient(tgfake.Token, fake.Endpoint(), &http.Client{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("NewBotAPIWithClient: %v", err)
	}
	return api
}

func apiErr(t *testing.T, err error) *tgbotapi.Error {
	t.Helper()
	var e *tgbotapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *tgbotapi.Error", err, err)
	}
	return e
}

func TestParseHTML(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"<b>bold</b> &lt;x&gt; &amp; &quot; &#65;&#x42;", `bold <x> & " AB`, true},
		{`<a href="https://x.y/?a=1&amp;b=2">link</a>`, "link", true},
		{`<pre><code class="language-go">x</code></pre>`, "x", true},
		{"a < b", "", false},
		{"a & b", "", false},
		{"&nbsp;", "", false},
		{"<b>x", "", false},
		{"<b><i>x</b></i>", "", false},
		{"<div>x</div>", "", false},
		{"<code><b>x</b></code>", "", false},
		{"a > b", "a > b", true},
	}
	for _, tt := range tests {
		got, err := tgfake.ParseHTML(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseHTML(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestLimitsAndErrors(t *testing.T) {
	fake := tgfake.New(t)
	api := newAPI(t, fake)

	_, err := api.Send(tgbotapi.NewMessage(42, strings.Repeat("x", 4097)))
	if e := apiErr(t, err); e.Code != 400 || !strings.Contains(e.Message, "too long") {
		t.Errorf("4097 chars: got %v", e)
	}
	// Entities do not count: 4096 visible characters in bold are fine.
	if _, err := api.Send(tgbotapi.MessageConfig{BaseChat: tgbotapi.BaseChat{ChatID: 42}, Text: "<b>" + strings.Repeat("&lt;", 4096) + "</b>", ParseMode: "HTML"}); err != nil {
		t.Errorf("4096 escaped chars: %v", err)
	}
	// UTF-16: an emoji counts twice.
	if _, err := api.Send(tgbotapi.NewMessage(42, strings.Repeat("😀", 2049))); err == nil {
		t.Errorf("2049 emoji: want too long")
	}
	_, err = api.Send(tgbotapi.MessageConfig{BaseChat: tgbotapi.BaseChat{ChatID: 42}, Text: "a < b", ParseMode: "HTML"})
	if e := apiErr(t, err); !strings.Contains(e.Message, "can't parse entities") {
		t.Errorf("bad html: got %v", e)
	}
	msg := tgbotapi.NewMessage(42, "pick")
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("x", strings.Repeat("d", 65))))
	_, err = api.Send(msg)
	if e := apiErr(t, err); !strings.Contains(e.Message, "BUTTON_DATA_INVALID") {
		t.Errorf("65-byte data: got %v", e)
	}
	sent, err := api.Send(tgbotapi.NewMessage(42, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.Send(tgbotapi.NewEditMessageText(42, sent.MessageID, "hello"))
	if e := apiErr(t, err); !strings.Contains(e.Message, "message is not modified") {
		t.Errorf("identical edit: got %v", e)
	}
	if _, err := api.Send(tgbotapi.NewEditMessageText(42, sent.MessageID, "hello again")); err != nil {
		t.Errorf("edit: %v", err)
	}
	// Methods returning true decode only through Request.
	if _, err := api.Request(tgbotapi.NewChatAction(42, tgbotapi.ChatTyping)); err != nil {
		t.Errorf("sendChatAction: %v", err)
	}
	if _, err := api.Request(tgbotapi.NewDeleteMessage(42, sent.MessageID)); err != nil {
		t.Errorf("deleteMessage: %v", err)
	}
	fake.FloodWait("sendMessage", 3)
	_, err = api.Send(tgbotapi.NewMessage(42, "flood"))
	if e := apiErr(t, err); e.Code != 429 || e.RetryAfter != 3 {
		t.Errorf("429: got code %d retry %d", e.Code, e.RetryAfter)
	}
	photo := tgbotapi.NewPhoto(42, tgbotapi.FileBytes{Name: "a.png", Bytes: []byte("PNG")})
	photo.Caption = "cap"
	if _, err := api.Send(photo); err != nil {
		t.Errorf("sendPhoto: %v", err)
	}
	msgs := fake.Messages(42)
	if got := len(msgs); got != 2 || string(msgs[1].Photo) != "PNG" {
		t.Errorf("messages: got %d", got)
	}
}

func TestGetUpdates(t *testing.T) {
	fake := tgfake.New(t)
	api := newAPI(t, fake)
	fake.Text(7, 7, "/start")
	fake.Text(7, 7, "hi")
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 2 {
		t.Fatalf("GetUpdates: %d, %v", len(ups), err)
	}
	if !ups[0].Message.IsCommand() || ups[0].Message.Command() != "start" {
		t.Errorf("first update is not /start: %+v", ups[0].Message)
	}
	// Without confirming, the same updates come again.
	again, _ := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if len(again) != 2 {
		t.Errorf("unconfirmed: got %d updates", len(again))
	}
	// Long poll: an update arriving during the poll ends it, long before
	// the poll's 30s; the 10s limit is only a generous sanity bound.
	polls := len(fake.Calls("getUpdates"))
	sent := make(chan time.Time, 1)
	go func() {
		for len(fake.Calls("getUpdates")) == polls { // until the poll arrives
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // and likely waits
		sent <- time.Now()
		fake.Text(7, 7, "later")
	}()
	slow, err := tgbotapi.NewBotAPIWithClient(tgfake.Token, fake.Endpoint(), &http.Client{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ups, err = slow.GetUpdates(tgbotapi.UpdateConfig{Offset: ups[1].UpdateID + 1, Timeout: 30})
	if err != nil || len(ups) != 1 || ups[0].Message.Text != "later" {
		t.Fatalf("long poll: %v %v", ups, err)
	}
	if el := time.Since(<-sent); el > 10*time.Second {
		t.Errorf("long poll ended %v after the update came", el)
	}
	// Two pollers at once: one gets 409.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = api.GetUpdates(tgbotapi.UpdateConfig{Offset: ups[0].UpdateID + 1, Timeout: 1})
		}()
	}
	wg.Wait()
	conflicts := 0
	for _, err := range errs {
		var e *tgbotapi.Error
		if errors.As(err, &e) && e.Code == 409 {
			conflicts++
		}
	}
	if conflicts != 1 {
		t.Errorf("two pollers: got errors %v, want one 409", errs)
	}
	if n := fake.Unconfirmed(); n != 0 {
		t.Errorf("unconfirmed after offset: %d", n)
	}
}

func TestJSONBody(t *testing.T) {
	fake := tgfake.New(t)
	body := `{"chat_id": 5, "text": "<b>hi</b>", "parse_mode": "HTML", "reply_markup": {"inline_keyboard": [[{"text": "x", "callback_data": "q:1:0"}]]}}`
	resp, err := http.Post(fake.URL()+"/bot"+tgfake.Token+"/sendMessage", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	msgs := fake.Messages(5)
	if len(msgs) != 1 || msgs[0].Plain != "hi" || len(msgs[0].Buttons()) != 1 {
		t.Errorf("got %+v", msgs)
	}
	resp, err = http.Post(fake.URL()+"/botWRONG/getMe", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("wrong token: status %d, want 401", resp.StatusCode)
	}
}

// An album's items come in one getUpdates answer, sharing a media group
// id; an image sent as a file is a document with its type.
func TestSendAlbum(t *testing.T) {
	fake := tgfake.New(t)
	api := newAPI(t, fake)
	ids := fake.SendAlbum(
		tgfake.Upload{ChatID: 5, UserID: 5, Kind: "photo", Data: []byte("a"), Caption: "two"},
		tgfake.Upload{ChatID: 5, UserID: 5, Kind: "document", Name: "b.png", MIMEType: "image/png", Data: []byte("b")},
	)
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || len(ids) != 2 {
		t.Fatalf("%d updates for %d items, want 2", len(ups), len(ids))
	}
	a, b := ups[0].Message, ups[1].Message
	if a.MediaGroupID != "album" || b.MediaGroupID != "album" || a.MessageID != ids[0] || b.MessageID != ids[1] {
		t.Errorf("items: %+v, %+v", a, b)
	}
	if len(a.Photo) != 1 || a.Caption != "two" || b.Document == nil || b.Document.MimeType != "image/png" || b.Document.FileName != "b.png" {
		t.Errorf("the photo %+v, the document %+v", a, b.Document)
	}
}

// Omissions leaves out each field once, at any depth; Drop leaves out
// those its mask names, counting the fields inside a dropped one.
func TestOmissionsAndDrop(t *testing.T) {
	raw := []byte(`{"a":1,"b":{"c":[{"d":2}],"e":"x"},"f":null}`)
	got, err := tgfake.Omissions(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"b":{"c":[{"d":2}],"e":"x"},"f":null}`,
		`{"a":1,"f":null}`,
		`{"a":1,"b":{"e":"x"},"f":null}`,
		`{"a":1,"b":{"c":[{}],"e":"x"},"f":null}`,
		`{"a":1,"b":{"c":[{"d":2}]},"f":null}`,
		`{"a":1,"b":{"c":[{"d":2}],"e":"x"}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d omissions, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("omission %d = %s, want %s", i, got[i], want[i])
		}
	}
	// Bits 1 (b, whose c and d are bits 2 and 3) and 5 (f).
	if got, want := string(tgfake.Drop(raw, 1<<1|1<<5)), `{"a":1}`; got != want {
		t.Errorf("Drop = %s, want %s", got, want)
	}
	if got := string(tgfake.Drop([]byte("not json"), 1)); got != "not json" {
		t.Errorf("Drop of no JSON = %q", got)
	}
	for _, k := range tgfake.Kinds {
		if _, err := tgfake.Omissions([]byte(k.Example)); err != nil {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
}

// Raw queues any update under the fake's next update_id.
func TestRaw(t *testing.T) {
	fake := tgfake.New(t)
	api := newAPI(t, fake)
	id, err := fake.Raw([]byte(`{"update_id":5,"poll":{"id":"p"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.Raw([]byte(`[1]`)); err == nil {
		t.Error("Raw took an array")
	}
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{})
	if err != nil || len(ups) != 1 || ups[0].UpdateID != id || ups[0].Poll == nil || ups[0].Poll.ID != "p" {
		t.Errorf("GetUpdates = %+v, %v; want the poll as update %d", ups, err, id)
	}
}

// A forum's topics: a message in one carries its thread and
// is_topic_message, as does a press on the bot's message there; a reply
// in a group without topics carries a thread alone; every send that names
// a topic is recorded there, and one to a closed, deleted or absent topic
// is refused as Telegram refuses it.
func TestForum(t *testing.T) {
	fake := tgfake.New(t)
	api := newAPI(t, fake)
	const forum, plain = -100, -200
	seven := fake.CreateTopic(forum, "seven")
	nine := fake.CreateTopic(forum, "nine")
	fake.Send(tgfake.Incoming{ChatID: forum, UserID: 1, Text: "in seven", Topic: seven})
	first := fake.Text(plain, 1, "first")
	fake.Send(tgfake.Incoming{ChatID: plain, UserID: 1, Text: "a reply", ReplyTo: first})
	send := func(chat int64, topic int, text string) error {
		p := tgbotapi.Params{"chat_id": strconv.FormatInt(chat, 10), "text": text}
		if topic != 0 {
			p["message_thread_id"] = strconv.Itoa(topic)
		}
		_, err := api.MakeRequest("sendMessage", p)
		return err
	}
	if err := send(forum, nine, "to nine"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.MakeRequest("sendChatAction", tgbotapi.Params{"chat_id": "-100", "message_thread_id": strconv.Itoa(seven), "action": "typing"}); err != nil {
		t.Fatal(err)
	}
	if got := fake.MessagesIn(forum, nine); len(got) != 1 || got[0].Plain != "to nine" {
		t.Errorf("topic nine holds %+v, want the message sent there", got)
	}
	if got, want := fake.ActionsIn(forum, seven), 1; got != want {
		t.Errorf("chat actions in topic seven: got %d, want %d", got, want)
	}
	fake.Press(forum, 1, fake.MessagesIn(forum, nine)[0].ID, "x")

	var ups []map[string]json.RawMessage
	raw, err := api.MakeRequest("getUpdates", tgbotapi.Params{})
	if err != nil || json.Unmarshal(raw.Result, &ups) != nil || len(ups) != 4 {
		t.Fatalf("getUpdates = %s, %v; want 4 updates", raw.Result, err)
	}
	thread := func(u map[string]json.RawMessage, path ...string) string {
		for _, k := range path[:len(path)-1] {
			var next map[string]json.RawMessage
			_ = json.Unmarshal(u[k], &next)
			u = next
		}
		return string(u[path[len(path)-1]])
	}
	tests := []struct {
		name           string
		got, wantValue string
	}{
		{"a message's thread in a topic", thread(ups[0], "message", "message_thread_id"), strconv.Itoa(seven)},
		{"a message's mark in a topic", thread(ups[0], "message", "is_topic_message"), "true"},
		{"a first message's thread in a plain group", thread(ups[1], "message", "message_thread_id"), ""},
		{"a reply's thread in a plain group", thread(ups[2], "message", "message_thread_id"), strconv.Itoa(first)},
		{"a reply's mark in a plain group", thread(ups[2], "message", "is_topic_message"), ""},
		{"a press's thread in a topic", thread(ups[3], "callback_query", "message", "message_thread_id"), strconv.Itoa(nine)},
		{"a press's mark in a topic", thread(ups[3], "callback_query", "message", "is_topic_message"), "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.wantValue {
				t.Errorf("got %q, want %q", tt.got, tt.wantValue)
			}
		})
	}

	fake.CloseTopic(forum, seven)
	fake.DeleteTopic(forum, nine)
	refusals := []struct {
		name  string
		chat  int64
		topic int
		want  string
	}{
		{"a closed topic", forum, seven, "TOPIC_CLOSED"},
		{"a deleted topic", forum, nine, "message thread not found"},
		{"a reply's thread, no topic", plain, first, "message thread not found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			e := apiErr(t, send(tt.chat, tt.topic, "hello"))
			if e.Code != 400 || !strings.Contains(e.Message, tt.want) {
				t.Errorf("got %d %q, want 400 %q", e.Code, e.Message, tt.want)
			}
		})
	}
	if got := fake.MessagesIn(forum, nine); len(got) != 0 {
		t.Errorf("a deleted topic still holds %d messages", len(got))
	}
}
