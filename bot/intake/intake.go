// Package intake says what the model gets of a user's message: its text,
// or what it carries (read by package media: a recording's transcript, a
// text file, a PDF, images; an album's items together) with its caption.
// On the way it tells the user what is due: why a message cannot be read,
// a notice, what was heard. In a group, the bot's @name is taken out.
package intake

import (
	"context"
	"log/slog"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/llm"
)

// MaxHeardShown is how many characters of a transcript the user sees:
// one message's worth.
const MaxHeardShown = 3500

// Telegram is what the user is told through; *telegram.Client is one.
type Telegram interface {
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
}

// A Reader reads the messages of turns.
type Reader struct {
	Media *media.Reader
	TG    Telegram
	// BotName is the bot's username, taken out of a group's messages.
	BotName func() string
	Logger  *slog.Logger
}

// Message is what the model gets of m, written at place at: its text, or
// what it carries with its caption. ok is false when there is nothing to
// send, the user having been told why.
func (r *Reader) Message(ctx context.Context, m *tgbotapi.Message, at telegram.Place) (text string, images []llm.Image, ok bool) {
	if m.Text == "" {
		if res, carried := r.Media.Read(ctx, m); carried {
			return r.text(ctx, m, at, res)
		}
		return r.text(ctx, m, at, media.Result{Text: m.Caption})
	}
	return r.text(ctx, m, at, media.Result{Text: m.Text})
}

// Album is Message for an album's items, written at place at: they are
// read together, and answered as their first.
func (r *Reader) Album(ctx context.Context, items []*tgbotapi.Message, at telegram.Place) (text string, images []llm.Image, ok bool) {
	return r.text(ctx, items[0], at, r.Media.ReadAlbum(ctx, items))
}

// text is what the model gets of res, what was read of m (or of the
// album m starts), telling the user what is due: why it cannot be read,
// a notice, what was heard.
func (r *Reader) text(ctx context.Context, m *tgbotapi.Message, at telegram.Place, res media.Result) (string, []llm.Image, bool) {
	private := m.Chat.IsPrivate()
	if res.Problem != "" {
		r.say(ctx, at, render.Escape(res.Problem))
		return "", nil, false
	}
	if res.Notice != "" {
		r.say(ctx, at, render.Escape(res.Notice))
	}
	if res.Heard != "" {
		// One message, whatever was heard: its beginning, if it is long.
		shown := "🎤 <i>I heard:</i>\n<blockquote expandable>" + render.Escape(render.Shorten(res.Heard, MaxHeardShown)) + "</blockquote>"
		if _, err := r.TG.SendLong(ctx, at, m.MessageID, shown, nil); err != nil {
			r.Logger.Error("send the transcript", "chat", at, "err", err)
		}
	}
	text := res.Text
	if !private {
		text = telegram.StripMention(text, r.BotName())
	}
	if strings.TrimSpace(text) == "" {
		if private || m.Text != "" {
			r.say(ctx, at, "I can read text, voice messages, photos, images, text files and PDFs; not stickers or this kind of message.")
		}
		return "", nil, false
	}
	return text, res.Images, true
}

func (r *Reader) say(ctx context.Context, at telegram.Place, html string) {
	if _, err := r.TG.SendLong(ctx, at, 0, html, nil); err != nil {
		r.Logger.Error("send message", "chat", at, "err", err)
	}
}
