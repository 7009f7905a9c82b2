package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
)

// Resource links: a tool's result may point at resources rather than
// hold them. The user gets a button for each; pressing it reads the
// resource, through the same rules as a read the model asks for (the
// server's autoApprove "resource:" entries, AUTO_APPROVE=all, else an
// approval card), and sends it as a photo or a document. Only the user
// whose turn the tool ran for may open them, in groups too.
//
// The links are kept in this instance's memory, at most maxLinks of
// them: after a restart a button says it is no longer available (the
// model, told of the link, can still read it).

// maxLinks bounds the links kept for their buttons; the oldest go first.
const maxLinks = 1000

// maxLinkButtons bounds the buttons of one result's links.
const maxLinkButtons = 8

// A link is a resource link a tool returned in a chat, for a user.
type link struct {
	chatID, user int64
	server       string
	uri, name    string
}

// links are the links kept, by key.
type links struct {
	mu    sync.Mutex
	m     map[string]link
	order []string
}

func (ls *links) put(l link) string {
	b := make([]byte, callback.LinkKeyLen/2)
	_, _ = rand.Read(b)
	key := hex.EncodeToString(b)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]link{}
	}
	ls.m[key] = l
	ls.order = append(ls.order, key)
	for len(ls.order) > maxLinks {
		delete(ls.m, ls.order[0])
		ls.order = ls.order[1:]
	}
	return key
}

func (ls *links) get(key string) (link, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l, ok := ls.m[key]
	return l, ok
}

// showLinks sends the buttons of the resource links a call of user's
// turn returned.
func (b *Bot) showLinks(ctx context.Context, chatID, user int64, server, tool string, found []hub.Content) {
	if len(found) == 0 {
		return
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for _, c := range found[:min(len(found), maxLinkButtons)] {
		key := b.links.put(link{chatID: chatID, user: user, server: server, uri: c.URI, name: c.Name})
		label := c.Name
		if label == "" {
			label = c.URI
		}
		icon := "📄 "
		if strings.HasPrefix(c.MIMEType, "image/") {
			icon = "🖼 "
		}
		data := callback.Data{Kind: callback.Link, Link: key}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(icon+render.Visible(render.Shorten(label, 40)), data)))
	}
	html := fmt.Sprintf("🔗 %s returned %s to open:", b.toolWhat(server, tool, ""), render.Count(len(found), "link"))
	if len(found) > maxLinkButtons {
		html += fmt.Sprintf(" (the first %d here)", maxLinkButtons)
	}
	markup := tgbotapi.NewInlineKeyboardMarkup(rows...)
	if _, err := b.tg.SendHTML(ctx, chatID, 0, html, markup); err != nil {
		b.logger.Error("send links", "chat", chatID, "err", err)
	}
}

// handleLinkPress opens the link a button names, asks first where the
// resource approval rules say so, or answers its approval card.
func (b *Bot) handleLinkPress(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	chatID, user := cq.Message.Chat.ID, cq.From.ID
	l, ok := b.links.get(data.Link)
	switch {
	case !ok || l.chatID != chatID:
		b.tg.AnswerCallback(ctx, cq.ID, "This link is no longer available.", true)
		return
	case l.user != user:
		b.tg.AnswerCallback(ctx, cq.ID, "Only the person who asked can open this.", true)
		return
	}
	what := fmt.Sprintf("<code>%s</code> on <b>%s</b>", render.Escape(render.Visible(render.Shorten(l.uri, 200))), render.Escape(l.server))
	switch data.Answer {
	case callback.Deny:
		b.tg.AnswerCallback(ctx, cq.ID, "", false)
		if err := b.tg.EditHTML(ctx, chatID, cq.Message.MessageID, "Not read: "+what, nil); err != nil {
			b.logger.Debug("edit link card", "err", err)
		}
		return
	case 0:
		if s, ok := b.hub.Catalog().Server(l.server); !b.cfg.AutoApproveAll && (!ok || !s.AutoApprovesResource(l.uri)) {
			b.tg.AnswerCallback(ctx, cq.ID, "", false)
			markup := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
				tgbotapi.NewInlineKeyboardButtonData("✅ Approve", callback.Data{Kind: callback.Link, Link: data.Link, Answer: callback.Approve}.String()),
				tgbotapi.NewInlineKeyboardButtonData("❌ Deny", callback.Data{Kind: callback.Link, Link: data.Link, Answer: callback.Deny}.String())))
			b.sayWith(ctx, chatID, "🔐 Read "+what+"? It is sent to you, not to the assistant.", markup)
			return
		}
	default: // approved on its card
		if err := b.tg.EditHTML(ctx, chatID, cq.Message.MessageID, "Approved: "+what, nil); err != nil {
			b.logger.Debug("edit link card", "err", err)
		}
	}
	b.tg.AnswerCallback(ctx, cq.ID, "Opening…", false)
	b.sendResource(ctx, l)
}

// sayWith sends html with markup.
func (b *Bot) sayWith(ctx context.Context, chatID int64, html string, markup tgbotapi.InlineKeyboardMarkup) {
	if _, err := b.tg.SendHTML(ctx, chatID, 0, html, markup); err != nil {
		b.logger.Error("send message", "chat", chatID, "err", err)
	}
}

// sendResource reads l and sends each of its parts: an image as a photo,
// anything else as a document.
func (b *Bot) sendResource(ctx context.Context, l link) {
	res, err := b.hub.ReadResource(ctx, caller(l.user, l.chatID), l.server, l.uri)
	if err != nil {
		b.logger.Warn("read a resource link", "chat", l.chatID, "server", l.server, "err", err)
		b.say(ctx, l.chatID, "Could not read "+render.Escape(render.Visible(render.Shorten(l.name, 80)))+": the server did not give it.")
		return
	}
	caption := render.Visible(render.Shorten(l.name, 200)) + " · " + l.server
	for i, c := range res.Content {
		data := c.Data
		if data == nil {
			data = []byte(c.Text)
		}
		if strings.HasPrefix(c.MIMEType, "image/") && len(c.Data) > 0 {
			if err := b.tg.SendPhoto(ctx, l.chatID, c.Data, c.MIMEType, caption, i); err == nil {
				continue
			}
		}
		if c.URI == "" {
			c.URI = l.uri
		}
		if err := b.tg.SendFile(ctx, l.chatID, data, fileName(c), caption); err != nil {
			b.logger.Error("send a resource", "chat", l.chatID, "err", err)
			b.say(ctx, l.chatID, "(The resource could not be sent.)")
		}
	}
}
