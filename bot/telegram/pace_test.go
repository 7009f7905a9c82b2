package telegram_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// A countingPacer counts the sends it spaced; it refuses them all once
// closed, as a pacer does whose context ended.
type countingPacer struct {
	waits  atomic.Int32
	closed atomic.Bool
}

func (p *countingPacer) Wait(ctx context.Context) error {
	if p.closed.Load() {
		return context.Canceled
	}
	p.waits.Add(1)
	return nil
}

// Every new message waits for the pace; edits, chat actions and answers
// to presses do not, and a send the pace refuses never reaches Telegram.
func TestPaceSpacesNewMessagesOnly(t *testing.T) {
	fake := tgfake.New(t)
	pace := &countingPacer{}
	c := telegram.New(tgfake.Token, fake.URL(), telegram.Options{MaxRetries: 1,
		RetryMin: time.Millisecond, RetryMax: time.Millisecond, Pace: pace})
	t.Cleanup(c.Close)
	ctx := t.Context()
	const chat = 5
	m, err := c.SendHTML(ctx, telegram.In(chat), 0, "one", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendHTML(ctx, telegram.In(chat), 0, "two", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.EditHTML(ctx, chat, m.MessageID, "one, edited", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Request(ctx, tgbotapi.NewChatAction(chat, tgbotapi.ChatTyping)); err != nil {
		t.Fatal(err)
	}
	if err := c.SendPhoto(ctx, telegram.In(chat), tinyPNG, "image/png", "", 0); err != nil {
		t.Fatal(err)
	}
	if got, want := pace.waits.Load(), int32(3); got != want {
		t.Errorf("paced %d calls, want %d (two messages and a photo)", got, want)
	}

	pace.closed.Store(true)
	before := len(fake.Calls("sendMessage"))
	if _, err := c.SendHTML(ctx, telegram.In(chat), 0, "three", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("send refused by the pace: got %v, want context.Canceled", err)
	}
	if n := len(fake.Calls("sendMessage")); n != before {
		t.Errorf("a send the pace refused reached Telegram (%d calls, want %d)", n, before)
	}
}

// tinyPNG is a 1x1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
