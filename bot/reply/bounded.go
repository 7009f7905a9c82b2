package reply

import (
	"context"
	"fmt"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// MaxParts is how many messages a model's answer or question may take;
// beyond them it goes as a file. Four messages are about 16,000
// characters, more than anyone reads in a chat; an 8 MiB answer would
// otherwise be 2,050 messages, paced over half an hour.
const MaxParts = 4

// SendBounded sends the Markdown md as Telegram messages, the first a
// reply to replyTo and markup on the last, and returns the last and its
// HTML. Beyond MaxParts messages, the whole text goes as a file, kind +
// ".md", written from the messages' HTML (render.Document: what the chat
// would show, not md as the model wrote it), followed by one message with
// its beginning (and markup).
func (p *Parts) SendBounded(ctx context.Context, to telegram.Place, replyTo int, md, kind string, markup any) (tgbotapi.Message, string, error) {
	html := render.HTML(md)
	parts := render.Split(html, render.MaxMessageLen)
	if len(parts) <= MaxParts {
		m, err := p.TG.SendLong(ctx, to, replyTo, html, markup)
		if len(parts) == 0 {
			return m, "", err
		}
		return m, parts[len(parts)-1], err
	}
	name, doc := kind+".md", render.Document(html)
	caption := fmt.Sprintf("The whole %s: %s characters, too long for chat messages.", kind, render.Grouped(int64(utf8.RuneCountInString(doc))))
	if err := p.TG.SendFile(ctx, to, 0, []byte(doc), name, caption); err != nil {
		p.Logger.Error("send a long "+kind+" as a file", "chat", to, "err", err)
		name = ""
	}
	note := fmt.Sprintf("\n\n<i>… The %s goes on in %s above.</i>", kind, name)
	if name == "" {
		note = fmt.Sprintf("\n\n<i>… The rest of the %s could not be sent.</i>", kind)
	}
	start := render.Split(html, render.MaxMessageLen-len(note))[0] + note
	m, err := p.TG.SendLong(ctx, to, replyTo, start, markup)
	return m, start, err
}
