// Package links is the resource links tools return: a tool's result may
// point at resources rather than hold them. The user gets a button for each; pressing it reads the
// resource, through the same rules as a read the model asks for (the
// server's autoApprove "resource:" entries, AUTO_APPROVE=all, else an
// approval card), and sends it as a photo or a document. Only the user
// whose turn the tool ran for may open them, in groups too.
//
// The links are kept in the store, so that a button works after a
// restart and on any instance sharing the store: the newest
// maxLinksPerChat of a chat, for linkTTL. The button holds only the
// link's random key; a press is checked against the stored link's chat
// and user when it comes.
package links

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// A Store keeps the links (see store.Links); *sqlite.DB and *postgres.DB
// are one.
type Store interface {
	store.Links
}

// A Hub reads what a link points to, and says which resources a server
// lets be read without asking; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
	ReadResource(ctx context.Context, caller mcpgram.Caller, server, uri string) (*mcpgram.Result, error)
}

// Telegram is what the links are offered and sent through;
// *telegram.Client is one.
type Telegram interface {
	SendHTML(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error
	AnswerCallback(ctx context.Context, id, text string, alert bool)
	SendPhoto(ctx context.Context, to telegram.Place, data []byte, mimeType, caption string, i int) error
	SendFile(ctx context.Context, to telegram.Place, replyTo int, data []byte, name, caption string) error
}

// Options are the settings of Links; What is required.
type Options struct {
	// AutoApproveAll (AUTO_APPROVE=all) opens a link at a press, without
	// the approval card its server's autoApprove would need.
	AutoApproveAll bool
	// What names, in HTML, the tool a call ran (or the resource it
	// read), on the message of its links; required.
	What   func(server, tool, uri string) string
	Logger *slog.Logger
}

// Links are the resource links of the chats' turns.
type Links struct {
	store          Store
	hub            Hub
	tg             Telegram
	autoApproveAll bool
	what           func(server, tool, uri string) string
	logger         *slog.Logger
}

// New returns the Links kept in s, read through h, offered through tg.
func New(s Store, h Hub, tg Telegram, opts Options) *Links {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Links{store: s, hub: h, tg: tg, autoApproveAll: opts.AutoApproveAll, what: opts.What, logger: opts.Logger}
}

// say sends html to place at.
func (ls *Links) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := ls.tg.SendLong(ctx, to, 0, html, nil); err != nil {
		ls.logger.Error("send message", "chat", to, "err", err)
	}
}

// caller is the user of a conversation as the agent names them.
func caller(user int64, key string) mcpgram.Caller {
	return mcpgram.Caller{UserID: strconv.FormatInt(user, 10), ChatID: key}
}

const (
	// maxLinksPerChat bounds the links kept per chat; the oldest go first.
	maxLinksPerChat = 200
	// linkTTL is how long a link's button works. A link points into a
	// server's state, which may not last; the model, told of the link,
	// can still read it after.
	linkTTL = 7 * 24 * time.Hour
)

// maxLinkButtons bounds the buttons of one result's links.
const maxLinkButtons = 8

// A link is a resource link a tool returned in a conversation (its key),
// for a user.
type link struct {
	key       string
	user      int64
	server    string
	uri, name string
}

// put stores l and returns the key its button names.
func (ls *Links) put(ctx context.Context, l link) (string, error) {
	buf := make([]byte, callback.LinkKeyLen/2)
	_, _ = rand.Read(buf)
	key := hex.EncodeToString(buf)
	now := time.Now()
	err := ls.store.PutLink(ctx, store.Link{Key: key, ChatID: l.key, UserID: strconv.FormatInt(l.user, 10),
		Server: l.server, URI: l.uri, Name: l.name, CreatedAt: now, ExpiresAt: now.Add(linkTTL)}, maxLinksPerChat)
	return key, err
}

// get returns the unexpired link key names, if it is stored and
// well-formed.
func (ls *Links) get(ctx context.Context, key string) (link, bool, error) {
	sl, err := ls.store.GetLink(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return link{}, false, nil
	}
	if err != nil {
		return link{}, false, err
	}
	user, err := strconv.ParseInt(sl.UserID, 10, 64)
	if err != nil || !time.Now().Before(sl.ExpiresAt) {
		return link{}, false, nil
	}
	return link{key: sl.ChatID, user: user, server: sl.Server, uri: sl.URI, name: sl.Name}, true, nil
}

// Prune deletes the expired links.
func (ls *Links) Prune(ctx context.Context, now time.Time) {
	n, err := ls.store.PruneLinks(ctx, now)
	switch {
	case err != nil && ctx.Err() == nil:
		ls.logger.Warn("delete expired resource links", "err", err)
	case n > 0:
		ls.logger.Info("deleted expired resource links", "links", n)
	}
}

// Show sends to place at the buttons of the resource links a call of
// user's turn in the conversation key returned.
func (ls *Links) Show(ctx context.Context, at telegram.Place, key string, user int64, server, tool string, found []mcpgram.Content) {
	if len(found) == 0 {
		return
	}
	var rows [][]tgbotapi.InlineKeyboardButton
	for _, c := range found[:min(len(found), maxLinkButtons)] {
		ref, err := ls.put(ctx, link{key: key, user: user, server: server, uri: c.URI, name: c.Name})
		if err != nil {
			ls.logger.Error("store a resource link", "chat", at, "err", err)
			ls.say(ctx, at, "(The links the tool returned could not be kept: no buttons for them.)")
			return
		}
		label := c.Name
		if label == "" {
			label = c.URI
		}
		icon := "📄 "
		if strings.HasPrefix(c.MIMEType, "image/") {
			icon = "🖼 "
		}
		data := callback.Data{Kind: callback.Link, Link: ref}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(icon+render.Visible(render.Shorten(label, 40)), data)))
	}
	html := fmt.Sprintf("🔗 %s returned %s to open:", ls.what(server, tool, ""), render.Count(len(found), "link"))
	if len(found) > maxLinkButtons {
		html += fmt.Sprintf(" (the first %d here)", maxLinkButtons)
	}
	markup := tgbotapi.NewInlineKeyboardMarkup(rows...)
	if _, err := ls.tg.SendHTML(ctx, at, 0, html, markup); err != nil {
		ls.logger.Error("send links", "chat", at, "err", err)
	}
}

// Press opens the link a button names, pressed at place at in the
// conversation key, asks first where the resource approval rules say so,
// or answers its approval card.
func (ls *Links) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, data callback.Data) {
	chatID, user := cq.Message.Chat.ID, cq.From.ID
	l, ok, err := ls.get(ctx, data.Link)
	switch {
	case err != nil:
		ls.logger.Error("read a resource link", "chat", chatID, "err", err)
		ls.tg.AnswerCallback(ctx, cq.ID, "Could not open the link just now: try again in a moment.", true)
		return
	case !ok || l.key != key:
		ls.tg.AnswerCallback(ctx, cq.ID, "This link is no longer available.", true)
		return
	case l.user != user:
		ls.tg.AnswerCallback(ctx, cq.ID, "Only the person who asked can open this.", true)
		return
	}
	what := fmt.Sprintf("<code>%s</code> on <b>%s</b>", render.Escape(render.Visible(render.Shorten(l.uri, 200))), render.Escape(l.server))
	switch data.Answer {
	case callback.Deny:
		ls.tg.AnswerCallback(ctx, cq.ID, "", false)
		if err := ls.tg.EditHTML(ctx, chatID, cq.Message.MessageID, "Not read: "+what, nil); err != nil {
			ls.logger.Debug("edit link card", "err", err)
		}
		return
	case 0:
		if s, ok := ls.hub.Catalog().Server(l.server); !ls.autoApproveAll && (!ok || !s.AutoApprovesResource(l.uri)) {
			ls.tg.AnswerCallback(ctx, cq.ID, "", false)
			markup := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
				tgbotapi.NewInlineKeyboardButtonData("✅ Approve", callback.Data{Kind: callback.Link, Link: data.Link, Answer: callback.Approve}.String()),
				tgbotapi.NewInlineKeyboardButtonData("❌ Deny", callback.Data{Kind: callback.Link, Link: data.Link, Answer: callback.Deny}.String())))
			ls.sayWith(ctx, at, "🔐 Read "+what+"? It is sent to you, not to the assistant.", markup)
			return
		}
	default: // approved on its card
		if err := ls.tg.EditHTML(ctx, chatID, cq.Message.MessageID, "Approved: "+what, nil); err != nil {
			ls.logger.Debug("edit link card", "err", err)
		}
	}
	ls.tg.AnswerCallback(ctx, cq.ID, "Opening…", false)
	ls.sendResource(ctx, at, l)
}

// sayWith sends html with markup.
func (ls *Links) sayWith(ctx context.Context, to telegram.Place, html string, markup tgbotapi.InlineKeyboardMarkup) {
	if _, err := ls.tg.SendHTML(ctx, to, 0, html, markup); err != nil {
		ls.logger.Error("send message", "chat", to, "err", err)
	}
}

// sendResource reads l and sends each of its parts to place at: an image
// as a photo, anything else as a document.
func (ls *Links) sendResource(ctx context.Context, at telegram.Place, l link) {
	res, err := ls.hub.ReadResource(ctx, caller(l.user, l.key), l.server, l.uri)
	if err != nil {
		ls.logger.Warn("read a resource link", "chat", at, "server", l.server, "err", err)
		ls.say(ctx, at, "Could not read "+render.Escape(render.Visible(render.Shorten(l.name, 80)))+": the server did not give it.")
		return
	}
	caption := render.Visible(render.Shorten(l.name, 200)) + " · " + l.server
	for i, c := range res.Content {
		data := c.Data
		if data == nil {
			data = []byte(c.Text)
		}
		if strings.HasPrefix(c.MIMEType, "image/") && len(c.Data) > 0 {
			if err := ls.tg.SendPhoto(ctx, at, c.Data, c.MIMEType, caption, i); err == nil {
				continue
			}
		}
		if c.URI == "" {
			c.URI = l.uri
		}
		if err := ls.tg.SendFile(ctx, at, 0, data, render.FileName(c), caption); err != nil {
			ls.logger.Error("send a resource", "chat", at, "err", err)
			ls.say(ctx, at, "(The resource could not be sent.)")
		}
	}
}
