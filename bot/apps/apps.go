// Package apps shows MCP Apps as Telegram Mini Apps: a tool that names a
// ui:// page (its _meta.ui.resourceUri) runs in a chat, and its result
// message gets a web_app button that opens the page, showing that call's
// input and result, inside Telegram.
//
// What the page needs is kept in the store (see store.AppView), so any
// instance of the bot serves it after any restart: the button's URL
// names only the view, by a token signed with a key derived from the bot's
// token (see Signer), for the one user whose turn made the call, until it
// expires. The page itself checks the init data Telegram signs for the
// user who opened it (see CheckInitData), on every request.
//
// Telegram takes web_app inline buttons only in a private chat with the
// bot. A call made in a group gets its button in the private chat of the
// member who made it; a member who never started the bot is told, in the
// group, to do so.
package apps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// A Store keeps the views (see store.AppViews), and the approvals of
// the apps' requests (see Host); *sqlite.DB and *postgres.DB are one.
type Store interface {
	store.AppViews
	store.Interactions
}

// A Catalog says which tools have an app; *hub.Hub's Catalog is one.
type Catalog func() mcpgram.Catalog

// Telegram is what the buttons and approval cards are sent through;
// *telegram.Client is one.
type Telegram interface {
	SendHTML(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	SendLong(ctx context.Context, to telegram.Place, replyTo int, html string, markup any) (tgbotapi.Message, error)
	EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error
	AnswerCallback(ctx context.Context, id, text string, alert bool)
}

// Options are the settings of Apps; URL and Signer are required.
type Options struct {
	// URL is where the pages are served, PUBLIC_URL + "/apps/": a view's
	// page is URL + its token.
	URL    string
	Signer *Signer
	// Chats is what the apps' words ask of the bot (see AppMessage).
	Chats  Chats
	Logger *slog.Logger
}

// Apps offers the apps of the chats' tool calls, and takes what they say
// into their chats.
type Apps struct {
	store   Store
	catalog Catalog
	tg      Telegram
	opts    Options
}

// New returns the Apps whose views are kept in s, whose tools are read
// from catalog, and whose buttons go through tg.
func New(s Store, catalog Catalog, tg Telegram, opts Options) *Apps {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Apps{store: s, catalog: catalog, tg: tg, opts: opts}
}

const (
	// maxViewsPerChat bounds the views kept per chat; the oldest go
	// first.
	maxViewsPerChat = 100
	// ViewTTL is how long an app's button works: a view holds a call's
	// result, which goes stale, and the server's page may change.
	ViewTTL = 24 * time.Hour
	// viewIDLen is the random view ID's length in bytes, before hex.
	viewIDLen = 16
)

// A Call is a call made in a chat's turn that may have an app.
type Call struct {
	At        telegram.Place // where the turn's messages go
	Key       string         // the turn's conversation
	User      int64          // whose turn it was
	Server    string
	Tool      string
	Arguments string // JSON
	Result    *mcpgram.Result
}

// Show sends the button that opens c's app, if its tool has one: in
// c.At when it is a private chat, else in the user's private chat.
func (a *Apps) Show(ctx context.Context, c Call) {
	s, ok := a.catalog().Server(c.Server)
	if !ok {
		return
	}
	tool, ok := s.Tool(c.Tool)
	if !ok || tool.App.ResourceURI == "" || c.Result == nil {
		return
	}
	title := tool.Title
	if title == "" {
		title = tool.Name
	}
	v := store.AppView{ChatID: c.Key, UserID: strconv.FormatInt(c.User, 10), Server: c.Server, Tool: c.Tool,
		ResourceURI: tool.App.ResourceURI, Title: render.Shorten(title, 200)}
	var err error
	if v.Input, v.Result, err = encodeCall(c.Arguments, c.Result); err != nil {
		a.opts.Logger.Warn("keep an app's call", "server", c.Server, "tool", c.Tool, "err", err)
		return
	}
	id, err := a.put(ctx, v)
	if err != nil {
		a.opts.Logger.Error("keep an app's call", "chat", c.At, "server", c.Server, "tool", c.Tool, "err", err)
		return
	}
	a.send(ctx, c, v.Title, a.opts.URL+a.opts.Signer.Sign(id, c.User, time.Now().Add(ViewTTL)))
}

// put stores v under a new random ID, and returns it.
func (a *Apps) put(ctx context.Context, v store.AppView) (string, error) {
	buf := make([]byte, viewIDLen)
	_, _ = rand.Read(buf)
	v.ID = hex.EncodeToString(buf)
	now := time.Now()
	v.CreatedAt, v.ExpiresAt = now, now.Add(ViewTTL)
	if err := a.store.PutAppView(ctx, v, maxViewsPerChat); err != nil {
		return "", fmt.Errorf("put app view: %w", err)
	}
	return v.ID, nil
}

// send sends the button that opens url, named after title, where c's
// user can press it.
func (a *Apps) send(ctx context.Context, c Call, title, url string) {
	label := "🧩 Open " + render.Visible(render.Shorten(title, 40))
	markup := webAppMarkup{InlineKeyboard: [][]webAppButton{{{Text: label, WebApp: webAppInfo{URL: url}}}}}
	what := fmt.Sprintf("🧩 <b>%s</b> has a view of this result.", render.Escape(render.Visible(render.Shorten(title, 80))))
	to := c.At
	if c.At.Chat != c.User {
		to = telegram.In(c.User)
		what = fmt.Sprintf("🧩 <b>%s</b> has a view of the result of your request in a group.", render.Escape(render.Visible(render.Shorten(title, 80))))
	}
	_, err := a.tg.SendHTML(ctx, to, 0, what, markup)
	if err == nil {
		return
	}
	a.opts.Logger.Warn("send an app's button", "chat", to, "err", err)
	var tgErr *tgbotapi.Error
	if to != c.At && errors.As(err, &tgErr) {
		note := "🧩 This result has a view I can open only in a private chat: start a chat with me, then ask again."
		if _, err := a.tg.SendHTML(ctx, c.At, 0, note, nil); err != nil {
			a.opts.Logger.Warn("send a note", "chat", c.At, "err", err)
		}
	}
}

// webAppMarkup is an inline keyboard of web_app buttons, which
// go-telegram-bot-api (Bot API 5.5) has no field for.
type webAppMarkup struct {
	InlineKeyboard [][]webAppButton `json:"inline_keyboard"`
}

type webAppButton struct {
	Text   string     `json:"text"`
	WebApp webAppInfo `json:"web_app"`
}

type webAppInfo struct {
	URL string `json:"url"`
}

// Prune deletes the expired views.
func (a *Apps) Prune(ctx context.Context, now time.Time) {
	n, err := a.store.PruneAppViews(ctx, now)
	switch {
	case err != nil && ctx.Err() == nil:
		a.opts.Logger.Warn("delete expired app views", "err", err)
	case n > 0:
		a.opts.Logger.Info("deleted expired app views", "views", n)
	}
}

// PathPrefix is where, under PUBLIC_URL, the apps' pages are served.
const PathPrefix = "/apps/"
