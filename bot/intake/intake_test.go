package intake_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/intake"
	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// sent records what the user was told.
type sent struct{ said []string }

func (s *sent) SendLong(_ context.Context, _ telegram.Place, replyTo int, html string, _ any) (tgbotapi.Message, error) {
	s.said = append(s.said, html)
	return tgbotapi.Message{}, nil
}

type files struct{}

func (files) Download(context.Context, string, int64) ([]byte, string, error) {
	return []byte("OggS"), "voice.ogg", nil
}

type ears string

func (e ears) Transcribe(context.Context, string, []byte) (string, error) { return string(e), nil }

func reader(tg *sent, heard string) *intake.Reader {
	return &intake.Reader{TG: tg, BotName: func() string { return "mcpgram_bot" }, Logger: slog.New(slog.DiscardHandler),
		Media: &media.Reader{Files: files{}, Transcriber: ears(heard), MaxDocument: 64 << 10, Logger: slog.New(slog.DiscardHandler)}}
}

func TestMessage(t *testing.T) {
	private, group := &tgbotapi.Chat{ID: 7, Type: "private"}, &tgbotapi.Chat{ID: -5, Type: "supergroup"}
	long := strings.Repeat("word ", 1000)
	for _, c := range []struct {
		name  string
		m     *tgbotapi.Message
		want  string
		ok    bool
		said  string // what the user was told, "" for nothing
		heard int    // the most characters of the transcript shown
	}{
		{"a text", &tgbotapi.Message{Chat: private, Text: "hello @mcpgram_bot"}, "hello @mcpgram_bot", true, "", 0},
		{"a group's mention", &tgbotapi.Message{Chat: group, Text: "@mcpgram_bot hello"}, "hello", true, "", 0},
		{"a caption", &tgbotapi.Message{Chat: private, Caption: "a caption"}, "a caption", true, "", 0},
		{"a sticker", &tgbotapi.Message{Chat: private, Sticker: &tgbotapi.Sticker{}}, "", false, "I can read text, voice messages", 0},
		{"a sticker in a group", &tgbotapi.Message{Chat: group, Sticker: &tgbotapi.Sticker{}}, "", false, "", 0},
		{"only the mention", &tgbotapi.Message{Chat: group, Text: "@mcpgram_bot"}, "", false, "I can read text, voice messages", 0},
		{"a voice note", &tgbotapi.Message{Chat: private, Voice: &tgbotapi.Voice{FileID: "v", FileSize: 4}}, long, true, "I heard", intake.MaxHeardShown},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := &sent{}
			text, _, ok := reader(tg, long).Message(context.Background(), c.m, telegram.In(c.m.Chat.ID))
			if strings.TrimSpace(text) != strings.TrimSpace(c.want) || ok != c.ok {
				t.Errorf("Message = %.40q, %v; want %.40q, %v", text, ok, c.want, c.ok)
			}
			switch {
			case c.said == "" && len(tg.said) > 0:
				t.Errorf("the user was told %q, want nothing", tg.said)
			case c.said != "" && (len(tg.said) != 1 || !strings.Contains(tg.said[0], c.said)):
				t.Errorf("the user was told %q, want one message with %q", tg.said, c.said)
			case c.heard > 0 && strings.Count(tg.said[0], "word") > c.heard/len("word "):
				t.Errorf("the transcript shown is %d characters, want %d at most", len(tg.said[0]), c.heard)
			}
		})
	}
}
