package telegram_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// Every kind of send names the place's topic, and none names one for
// the chat itself.
func TestSendsNameTheTopic(t *testing.T) {
	fake := tgfake.New(t)
	fake.EnableDrafts()
	c := telegram.New(tgfake.Token, fake.URL(), telegram.Options{MaxRetries: 1, RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	t.Cleanup(c.Close)
	ctx := t.Context()
	const chat = 5 // a private chat: drafts go there
	topic := fake.CreateTopic(chat, "ideas")
	sends := []struct {
		method string
		send   func(to telegram.Place) error
	}{
		{"sendMessage", func(to telegram.Place) error { _, err := c.SendHTML(ctx, to, 0, "<b>hi</b>", nil); return err }},
		{"sendMessage", func(to telegram.Place) error { _, err := c.SendLong(ctx, to, 0, "hello", nil); return err }},
		{"sendPhoto", func(to telegram.Place) error { return c.SendPhoto(ctx, to, tinyPNG, "image/png", "a photo", 0) }},
		{"sendDocument", func(to telegram.Place) error { return c.SendFile(ctx, to, 0, []byte("a,b"), "a.csv", "a file") }},
		{"sendChatAction", func(to telegram.Place) error { return c.Typing(to) }},
		{"sendMessageDraft", func(to telegram.Place) error {
			if !c.SendDraft(to, 1, "draft") {
				return errors.New("no drafts")
			}
			return nil
		}},
	}
	for _, to := range []telegram.Place{telegram.In(chat), {Chat: chat, Topic: topic}} {
		for _, s := range sends {
			t.Run(s.method+" to "+to.String(), func(t *testing.T) {
				before := len(fake.Calls(s.method))
				if err := s.send(to); err != nil {
					t.Fatal(err)
				}
				calls := fake.Calls(s.method)
				want := ""
				if to.Topic != 0 {
					want = strconv.Itoa(to.Topic)
				}
				if got := calls[len(calls)-1].Params["message_thread_id"]; len(calls) == before || got != want {
					t.Errorf("message_thread_id = %q, want %q", got, want)
				}
			})
		}
	}
}

// TopicGone tells Telegram's answers for a topic that is no more from
// every other.
func TestTopicGone(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&tgbotapi.Error{Code: 400, Message: "Bad Request: TOPIC_CLOSED"}, true},
		{&tgbotapi.Error{Code: 400, Message: "Bad Request: message thread not found"}, true},
		{&tgbotapi.Error{Code: 400, Message: "Bad Request: TOPIC_DELETED"}, true},
		{&tgbotapi.Error{Code: 400, Message: "Bad Request: chat not found"}, false},
		{&tgbotapi.Error{Code: 400, Message: "Bad Request: message is too long"}, false},
		{&tgbotapi.Error{Code: 403, Message: "Forbidden: bot was kicked from the supergroup chat"}, false},
		{errors.New("TOPIC_CLOSED"), false},
		{nil, false},
	}
	for _, tt := range tests {
		name := "nil"
		if tt.err != nil {
			name = tt.err.Error()
		}
		t.Run(name, func(t *testing.T) {
			if got := telegram.TopicGone(tt.err); got != tt.want {
				t.Errorf("TopicGone = %v, want %v", got, tt.want)
			}
		})
	}
}
