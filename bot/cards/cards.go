// Package cards sends the messages whose buttons answer the agent: a
// follow-up question's options, or an approval's Approve, Deny and Always
// allow, keeps those whose buttons are live, answers a press of one by
// the turn it asks of the agent, and closes the approvals that expired
// unanswered. Their buttons carry ids, never option text (see
// package callback), and every press is authorised when pressed: the
// agent checks that the pending belongs to the presser, and the Deck
// that only admins allow a tool for good.
package cards

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// A Card is a question or approval message whose buttons are live.
type Card struct {
	At        telegram.Place // where it was sent
	Key       string         // the conversation it asks in
	MsgID     int
	PendingID int64
	Kind      string // "question" or "approval"
	Consent   bool   // an approval that asks for the user's own consent
	User      int64
	HTML      string
	Options   []string
}

// A Deck sends the cards of this instance's turns and keeps those whose
// buttons are live, for their presses (reply.Cards).
type Deck struct {
	TG      *telegram.Client
	Replies *reply.Parts // how a long question is sent
	// Catalog is the tools an approval card describes; IsAdmin says who
	// may answer one for good.
	Catalog func() mcpgram.Catalog
	IsAdmin func(user int64) bool
	Logger  *slog.Logger

	mu        sync.Mutex
	byPending map[int64]*Card  // a question or approval with live buttons
	open      map[string]*Card // conversation -> its newest live card
}

// Open keeps c, the newest card of its conversation: an older one's
// buttons are no longer live.
func (d *Deck) Open(c *Card) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byPending == nil {
		d.byPending, d.open = map[int64]*Card{}, map[string]*Card{}
	}
	if old := d.open[c.Key]; old != nil {
		delete(d.byPending, old.PendingID)
	}
	d.open[c.Key] = c
	d.byPending[c.PendingID] = c
}

// Live returns the card of pendingID while its buttons are live.
func (d *Deck) Live(pendingID int64) (*Card, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.byPending[pendingID]
	return c, ok
}

// Take forgets the card of pendingID and returns it.
func (d *Deck) Take(pendingID int64) *Card {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, ok := d.byPending[pendingID]
	if !ok {
		return nil
	}
	delete(d.byPending, pendingID)
	if d.open[c.Key] == c {
		delete(d.open, c.Key)
	}
	return c
}

// CloseOpen takes the buttons off the open card of the conversation key
// (of kind, or any kind when empty) and appends line to its text.
func (d *Deck) CloseOpen(ctx context.Context, key, kind, line string) {
	d.mu.Lock()
	c := d.open[key]
	d.mu.Unlock()
	if c == nil || (kind != "" && c.Kind != kind) {
		return
	}
	if d.Take(c.PendingID) == nil {
		return
	}
	d.Close(ctx, c, line)
}

// CloseOpenFor closes what a typed message by user settles: an open
// approval or question of that user. Another user's card stays: only the
// user whose turn it is may settle it.
func (d *Deck) CloseOpenFor(ctx context.Context, key string, user int64) {
	d.mu.Lock()
	c := d.open[key]
	d.mu.Unlock()
	switch {
	case c == nil:
	case c.Kind == "approval" && c.User == user:
		d.CloseOpen(ctx, key, "approval", "❌ <i>Denied: a new message came first.</i>")
	case c.User == user:
		d.CloseOpen(ctx, key, "question", "💬 <i>Answered by message.</i>")
	}
}

// PlaceOf is where the open card of the conversation key was sent, if
// this instance sent one.
func (d *Deck) PlaceOf(key string) (telegram.Place, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.open[key]; c != nil {
		return c.At, true
	}
	return telegram.Place{}, false
}

// Close takes c's buttons off and appends line to its text.
func (d *Deck) Close(ctx context.Context, c *Card, line string) {
	if err := d.TG.EditHTML(ctx, c.At.Chat, c.MsgID, c.HTML+"\n\n"+line, nil); err != nil {
		d.Logger.Debug("close card", "chat", c.At, "err", err)
		d.TG.RemoveKeyboard(ctx, c.At.Chat, c.MsgID)
	}
}

// Question sends q's card, with a button for each of its options.
func (d *Deck) Question(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, q *agent.Question) {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, opt := range q.Options {
		data := callback.Data{Kind: callback.Option, Pending: q.PendingID, Option: i}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(render.Shorten(render.Visible(oneLine(opt)), 40), data)))
	}
	var markup any
	if len(rows) > 0 {
		markup = tgbotapi.NewInlineKeyboardMarkup(rows...)
	}
	m, last, err := d.Replies.SendBounded(ctx, at, replyTo, "❓ "+q.Text, "question", markup)
	if err != nil {
		d.Logger.Error("send question", "chat", at, "err", err)
		return
	}
	if len(rows) > 0 {
		d.Open(&Card{At: at, Key: key, MsgID: m.MessageID, PendingID: q.PendingID, Kind: "question", User: user, HTML: last, Options: q.Options})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Approval sends a's card: what the call does, its arguments (a file
// when too long to quote), and its buttons; an admin's has Always allow.
func (d *Deck) Approval(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, a *agent.Approval) {
	var expiry string
	if !a.ExpiresAt.IsZero() {
		expiry = fmt.Sprintf("<i>%s %s if nobody answers.</i>", expiryPrefix, roundDuration(time.Until(a.ExpiresAt)))
	}
	ac := render.CardFor(d.Catalog(), a.Server, a.Tool, a.URI, a.Arguments, a.Consent)
	ac.Footer, ac.File = expiry, ArgsFileName
	html, attach := ac.HTML()
	yes, no := "✅ Approve", "❌ Deny"
	if a.Consent {
		yes, no = consentYes, consentNo
	}
	rows := [][]tgbotapi.InlineKeyboardButton{tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData(yes, verdict(a.PendingID, callback.Approve)),
		tgbotapi.NewInlineKeyboardButtonData(no, verdict(a.PendingID, callback.Deny)),
	)}
	// A consent call is the user's say on each call: nobody may answer it
	// for good.
	if d.IsAdmin(user) && !a.Consent {
		what := render.Shorten(render.Visible(a.Tool), 30)
		if a.Tool == "" {
			what = "this resource"
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData("♾ Always allow "+what, verdict(a.PendingID, callback.Always))))
	}
	// A card of many arguments takes several messages; the buttons go on
	// the last, after every argument was shown.
	m, err := d.TG.SendLong(ctx, at, replyTo, html, tgbotapi.NewInlineKeyboardMarkup(rows...))
	if err != nil {
		d.Logger.Error("send approval", "chat", at, "err", err)
		return
	}
	if attach != nil {
		if err := d.TG.SendFile(ctx, at, m.MessageID, attach, ArgsFileName, ""); err != nil {
			d.Logger.Error("send approval arguments", "chat", at, "err", err)
		}
	}
	// Once answered, the card keeps what it asked and its outcome, not
	// when it would have expired.
	parts := render.Split(html, render.MaxMessageLen)
	d.Open(&Card{At: at, Key: key, MsgID: m.MessageID, PendingID: a.PendingID, Kind: "approval", Consent: a.Consent, User: user,
		HTML: strings.TrimSuffix(strings.TrimSuffix(parts[len(parts)-1], expiry), "\n")})
}

// The buttons of a consent card, how an approval card says when it
// expires, and the attachment holding arguments too long to quote.
const (
	consentYes   = "✅ I agree"
	consentNo    = "❌ No"
	expiryPrefix = "Expires in"
	ArgsFileName = "arguments.json"
)

func roundDuration(d time.Duration) string {
	if d >= time.Minute {
		return fmt.Sprintf("%d min", int((d+30*time.Second)/time.Minute))
	}
	return fmt.Sprintf("%d s", max(1, int(d.Round(time.Second)/time.Second)))
}

func verdict(pending int64, a callback.Answer) string {
	return callback.Data{Kind: callback.Verdict, Pending: pending, Answer: a}.String()
}
