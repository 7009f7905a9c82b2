package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

// Cards are the messages whose buttons answer the agent: a follow-up
// question's options, or an approval's Approve, Deny and Always allow.
// Their buttons carry ids, never option text (see package callback), and
// every press is authorised when pressed: the agent checks that the
// pending belongs to the presser, and admin rights are checked here.

// A card is a question or approval message whose buttons are live.
type card struct {
	at        telegram.Place // where it was sent
	key       string         // the conversation it asks in
	msgID     int
	pendingID int64
	kind      string // "question" or "approval"
	consent   bool   // an approval that asks for the user's own consent
	user      int64
	html      string
	options   []string
}

func (b *Bot) openCard(c *card) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.openCards[c.key]; old != nil {
		b.cards.Delete(old.pendingID)
	}
	b.openCards[c.key] = c
	b.cards.Store(c.pendingID, c)
}

// takeCard forgets the card of pendingID and returns it.
func (b *Bot) takeCard(pendingID int64) *card {
	v, ok := b.cards.LoadAndDelete(pendingID)
	if !ok {
		return nil
	}
	c := v.(*card)
	b.mu.Lock()
	if b.openCards[c.key] == c {
		delete(b.openCards, c.key)
	}
	b.mu.Unlock()
	return c
}

// closeOpenCard takes the buttons off the open card of the conversation
// key (of kind, or any kind when empty) and appends line to its text.
func (b *Bot) closeOpenCard(ctx context.Context, key, kind, line string) {
	b.mu.Lock()
	c := b.openCards[key]
	b.mu.Unlock()
	if c == nil || (kind != "" && c.kind != kind) {
		return
	}
	if b.takeCard(c.pendingID) == nil {
		return
	}
	b.closeCard(ctx, c, line)
}

// closeOpenCardFor closes what a typed message by user settles: an open
// approval or question of that user. Another user's card stays: only the
// user whose turn it is may settle it.
func (b *Bot) closeOpenCardFor(ctx context.Context, key string, user int64) {
	b.mu.Lock()
	c := b.openCards[key]
	b.mu.Unlock()
	switch {
	case c == nil:
	case c.kind == "approval" && c.user == user:
		b.closeOpenCard(ctx, key, "approval", "❌ <i>Denied: a new message came first.</i>")
	case c.user == user:
		b.closeOpenCard(ctx, key, "question", "💬 <i>Answered by message.</i>")
	}
}

// openCardPlace is where the open card of the conversation key was sent,
// if this instance sent one.
func (b *Bot) openCardPlace(key string) (telegram.Place, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.openCards[key]; c != nil {
		return c.at, true
	}
	return telegram.Place{}, false
}

func (b *Bot) closeCard(ctx context.Context, c *card, line string) {
	if err := b.tg.EditHTML(ctx, c.at.Chat, c.msgID, c.html+"\n\n"+line, nil); err != nil {
		b.logger.Debug("close card", "chat", c.at, "err", err)
		b.tg.RemoveKeyboard(ctx, c.at.Chat, c.msgID)
	}
}

// cardSender sends a reply's cards as the bot's own (reply.Cards).
type cardSender struct{ b *Bot }

func (c cardSender) Question(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, q *agent.Question) {
	c.b.sendQuestion(ctx, at, key, user, replyTo, q)
}

func (c cardSender) Approval(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, a *agent.Approval) {
	c.b.sendApproval(ctx, at, key, user, replyTo, a)
}

func (b *Bot) sendQuestion(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, q *agent.Question) {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, opt := range q.Options {
		data := callback.Data{Kind: callback.Option, Pending: q.PendingID, Option: i}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(render.Shorten(render.Visible(oneLine(opt)), 40), data)))
	}
	var markup any
	if len(rows) > 0 {
		markup = tgbotapi.NewInlineKeyboardMarkup(rows...)
	}
	m, last, err := b.replies.SendBounded(ctx, at, replyTo, "❓ "+q.Text, "question", markup)
	if err != nil {
		b.logger.Error("send question", "chat", at, "err", err)
		return
	}
	if len(rows) > 0 {
		b.openCard(&card{at: at, key: key, msgID: m.MessageID, pendingID: q.PendingID, kind: "question", user: user, html: last, options: q.Options})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (b *Bot) sendApproval(ctx context.Context, at telegram.Place, key string, user int64, replyTo int, a *agent.Approval) {
	var expiry string
	if !a.ExpiresAt.IsZero() {
		expiry = fmt.Sprintf("<i>%s %s if nobody answers.</i>", expiryPrefix, roundDuration(time.Until(a.ExpiresAt)))
	}
	ac := render.CardFor(b.hub.Catalog(), a.Server, a.Tool, a.URI, a.Arguments, a.Consent)
	ac.Footer, ac.File = expiry, argsFileName
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
	if b.isAdmin(user) && !a.Consent {
		what := render.Shorten(render.Visible(a.Tool), 30)
		if a.Tool == "" {
			what = "this resource"
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData("♾ Always allow "+what, verdict(a.PendingID, callback.Always))))
	}
	// A card of many arguments takes several messages; the buttons go on
	// the last, after every argument was shown.
	m, err := b.tg.SendLong(ctx, at, replyTo, html, tgbotapi.NewInlineKeyboardMarkup(rows...))
	if err != nil {
		b.logger.Error("send approval", "chat", at, "err", err)
		return
	}
	if attach != nil {
		if err := b.tg.SendFile(ctx, at, m.MessageID, attach, argsFileName, ""); err != nil {
			b.logger.Error("send approval arguments", "chat", at, "err", err)
		}
	}
	// Once answered, the card keeps what it asked and its outcome, not
	// when it would have expired.
	parts := render.Split(html, render.MaxMessageLen)
	b.openCard(&card{at: at, key: key, msgID: m.MessageID, pendingID: a.PendingID, kind: "approval", consent: a.Consent, user: user,
		html: strings.TrimSuffix(strings.TrimSuffix(parts[len(parts)-1], expiry), "\n")})
}

// The buttons of a consent card, and how an approval card says when it
// expires.
const (
	consentYes   = "✅ I agree"
	consentNo    = "❌ No"
	expiryPrefix = "Expires in"
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

// expireLoop denies approvals nobody answered in time, until ctx ends.
// The turns it continues run in work, which outlives ctx by the grace.
func (b *Bot) expireLoop(ctx, work context.Context) {
	tick := time.NewTicker(b.cfg.ExpireInterval)
	defer tick.Stop()
	var swept time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The statistics' retention rides on the same beat: hourly is
		// plenty, and it needs no goroutine of its own.
		b.sweepStats(work, time.Now(), &swept)
		var ended []*reply.Reply
		emitFor := func(key string) func(agent.Event) {
			// Where the card was, as a shared forum's key names no topic.
			at, ok := b.openCardPlace(key)
			if !ok {
				at, _ = placeOf(key)
			}
			r := b.replies.New(reply.Spec{Base: work, Ctx: work, At: at, Key: key, OnFirst: func() {
				b.closeOpenCard(work, key, "approval", "⌛ <i>Expired: denied.</i>")
			}})
			ended = append(ended, r)
			return r.Emit
		}
		if err := b.agent.Expire(work, time.Now(), emitFor); err != nil && work.Err() == nil {
			b.logger.Error("expire approvals", "err", err)
		}
		for _, r := range ended {
			r.Finish()
		}
	}
}
