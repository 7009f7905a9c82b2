// Package connections is the /connections screen: the servers a user
// connected their own account to, each with a Disconnect button, and for
// an admin the operator's sign-ins, which every chat's calls use, each
// with a Sign out button. A user's sign-ins are theirs alone: in a group
// the command lists nothing, and a press is taken only in a private chat,
// from the user whose sign-in it names (or, for the operator's, an
// admin). Who is an admin, and whether the user may use the bot at all,
// is the bot's to say.
package connections

import (
	"context"
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

// A Keeper keeps the sign-ins to MCP servers; *oauth.Manager is one.
type Keeper interface {
	// SignIns lists the sign-ins of userID ("" the operator's).
	SignIns(ctx context.Context, userID string) ([]store.OAuthGrantInfo, error)
	// Disconnect deletes one and revokes its tokens (see
	// oauth.Manager.Disconnect).
	Disconnect(ctx context.Context, server, userID string) (revoked bool, err error)
}

// A Screen shows sign-ins kept by Keeper through TG.
type Screen struct {
	// Keeper keeps the sign-ins; nil where no server takes one.
	Keeper Keeper
	TG     *telegram.Client
	Logger *slog.Logger
}

// shown is text from the settings or the store as HTML: escaped, and
// every hidden character visible.
func shown(s string) string { return render.Escape(render.Visible(s)) }

// userKey is how the store names the Telegram user's sign-ins, as the
// hub's callers do.
func userKey(user int64) string { return strconv.FormatInt(user, 10) }

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// View renders user's screen, with the operator's sign-ins when
// operator is set, and note (HTML) on top.
func (sc *Screen) View(ctx context.Context, user int64, operator bool, note string) (string, tgbotapi.InlineKeyboardMarkup, error) {
	mine, err := sc.Keeper.SignIns(ctx, userKey(user))
	if err != nil {
		return "", tgbotapi.InlineKeyboardMarkup{}, err
	}
	var sb strings.Builder
	var rows [][]tgbotapi.InlineKeyboardButton
	if note != "" {
		sb.WriteString(note + "\n\n")
	}
	list := func(gs []store.OAuthGrantInfo, l listing) {
		sb.WriteString(l.title + "\n")
		if len(gs) == 0 {
			sb.WriteString(l.none)
		} else {
			sb.WriteString(l.some + "\n")
		}
		for _, g := range gs {
			fmt.Fprintf(&sb, "\n• <b>%s</b>, since %s", shown(g.Server), when(g.SignedInAt))
			rows = append(rows, button(l.action+render.Shorten(render.Visible(g.Server), l.width), l.owner, g.Server))
		}
	}
	list(mine, listing{title: "<b>Your connections</b>", none: "You have not connected your own account to any server.",
		some: "Servers you connected your own account to: tools there act as you.", action: "Disconnect ", width: 30, owner: user})
	if operator {
		ops, err := sc.Keeper.SignIns(ctx, "")
		if err != nil {
			return "", tgbotapi.InlineKeyboardMarkup{}, err
		}
		sb.WriteString("\n\n")
		list(ops, listing{title: "<b>Signed in for everyone</b> (admins only)", none: "No server is signed in to for every chat.",
			some: "Sign-ins every chat's calls use.", action: "Sign everyone out of ", width: 24, owner: 0})
	}
	return sb.String(), tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}, nil
}

// A listing is how View shows one owner's sign-ins: its heading, its
// line for none and for some, and its buttons' action, the width of the
// server's name on them, and their owner (0: the operator).
type listing struct {
	title, none, some, action string
	width                     int
	owner                     int64
}

func button(label string, owner int64, server string) []tgbotapi.InlineKeyboardButton {
	data := callback.Data{Kind: callback.Disconnect, Owner: owner, Server: server}.String()
	return []tgbotapi.InlineKeyboardButton{tgbotapi.NewInlineKeyboardButtonData(label, data)}
}

// Command answers /connections from user at place at: their screen in a
// private chat (an admin's with the operator's sign-ins), else where to
// ask.
func (sc *Screen) Command(ctx context.Context, at telegram.Place, user int64, private, admin bool) {
	switch {
	case !private:
		sc.say(ctx, at, "Your connections are yours alone: send /connections to me in a private chat.")
	case sc.Keeper == nil:
		sc.say(ctx, at, "No server here takes a sign-in, so there are no connections.")
	default:
		sc.Show(ctx, at, user, admin)
	}
}

func (sc *Screen) say(ctx context.Context, to telegram.Place, html string) {
	if _, err := sc.TG.SendLong(ctx, to, 0, html, nil); err != nil {
		sc.Logger.Error("send message", "chat", to, "err", err)
	}
}

// Show sends user's screen to place to.
func (sc *Screen) Show(ctx context.Context, to telegram.Place, user int64, operator bool) {
	html, kb, err := sc.View(ctx, user, operator, "")
	if err != nil {
		sc.Logger.Error("/connections", "err", err)
		html = "Sorry, I cannot read your connections right now. Please try again later."
	}
	var markup any
	if len(kb.InlineKeyboard) > 0 {
		markup = kb
	}
	if _, err := sc.TG.SendHTML(ctx, to, 0, html, markup); err != nil {
		sc.Logger.Error("send /connections", "chat", to, "err", err)
	}
}

// Press acts on cq, a press of a Disconnect button with data, from a user
// the bot admitted, who is an admin when admin is set. It refuses one
// who may not press it, and else answers the press and redraws the
// card, saying what became of the sign-in.
func (sc *Screen) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data, admin bool) {
	user := cq.From.ID
	if refusal := sc.refusal(cq, data, admin); refusal != "" {
		sc.Logger.Warn("Disconnect button refused", "user", user, "data", cq.Data, "why", refusal)
		sc.TG.AnswerCallback(ctx, cq.ID, refusal, true)
		return
	}
	owner := ""
	if data.Owner != 0 {
		owner = userKey(data.Owner)
	}
	list, err := sc.Keeper.SignIns(ctx, owner)
	if err != nil {
		sc.Logger.Error("/connections press", "err", err)
		sc.TG.AnswerCallback(ctx, cq.ID, "Sorry, I cannot reach my database right now. Please try again.", true)
		return
	}
	server, found := "", false
	for _, g := range list {
		if data.Names(g.Server) {
			server, found = g.Server, true
			break
		}
	}
	var ack, note string
	if found {
		ack, note = sc.disconnect(ctx, server, owner)
	} else {
		ack = "That connection is already gone."
		note = "<i>That connection was already gone.</i>"
	}
	sc.TG.AnswerCallback(ctx, cq.ID, render.Shorten(ack, 190), !found)
	html, kb, err := sc.View(ctx, user, admin, note)
	if err != nil {
		sc.Logger.Error("/connections redraw", "err", err)
		html, kb = note, tgbotapi.InlineKeyboardMarkup{}
	}
	if err := sc.TG.EditHTML(ctx, cq.Message.Chat.ID, cq.Message.MessageID, html, &kb); err != nil {
		sc.Logger.Error("edit /connections", "err", err)
	}
}

// refusal says why the user who pressed cq may not press a Disconnect
// button with data, or "" if they may.
func (sc *Screen) refusal(cq *tgbotapi.CallbackQuery, data callback.Data, admin bool) string {
	switch {
	case sc.Keeper == nil:
		return "There are no connections here."
	case !cq.Message.Chat.IsPrivate():
		return "Connections are managed in a private chat with me: send /connections there."
	case data.Owner == 0 && !admin:
		return "Only admins can sign everyone out of a server."
	case data.Owner != 0 && data.Owner != cq.From.ID:
		return "This is someone else's connection; only they can disconnect it."
	}
	return ""
}

// disconnect ends owner's sign-in to server, and says how it went: the
// answer to the press, and the card's note.
func (sc *Screen) disconnect(ctx context.Context, server, owner string) (ack, note string) {
	name, plain := shown(server), render.Visible(server)
	revoked, err := sc.Keeper.Disconnect(ctx, server, owner)
	var re *mcpgram.RevokeError
	switch {
	case errors.Is(err, mcpgram.ErrNotSignedIn):
		return "That connection is already gone.", "<i>That connection was already gone.</i>"
	case errors.As(err, &re):
		return "Disconnected from " + plain + ", but its server did not confirm revoking the tokens.",
			"⚠️ <b>Disconnected from " + name + "</b>: its tokens are deleted here, but its authorization server did not confirm revoking them, so they may stay good there until they expire."
	case err != nil:
		sc.Logger.Error("disconnect", "server", server, "err", err)
		return "Sorry, I could not disconnect " + plain + ". Please try again.", "⚠️ <i>Could not disconnect " + name + ". Please try again.</i>"
	case revoked:
		return "Disconnected from " + plain + ".", "✅ <b>Disconnected from " + name + "</b>: its tokens are deleted and revoked."
	}
	return "Disconnected from " + plain + ".", "✅ <b>Disconnected from " + name + "</b>: its tokens are deleted (its server offers no revocation, so they end when they expire)."
}
