package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
)

// Cards are the messages whose buttons answer the agent: a follow-up
// question's options, or an approval's Approve, Deny and Always allow.
// Their buttons carry ids, never option text (see package callback), and
// every press is authorised when pressed: the agent checks that the
// pending belongs to the presser, and admin rights are checked here.

// A card is a question or approval message whose buttons are live.
type card struct {
	chatID    int64
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
	if old := b.openCards[c.chatID]; old != nil {
		b.cards.Delete(old.pendingID)
	}
	b.openCards[c.chatID] = c
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
	if b.openCards[c.chatID] == c {
		delete(b.openCards, c.chatID)
	}
	b.mu.Unlock()
	return c
}

// closeOpenCard takes the buttons off the chat's open card (of kind, or
// any kind when empty) and appends line to its text.
func (b *Bot) closeOpenCard(ctx context.Context, chatID int64, kind, line string) {
	b.mu.Lock()
	c := b.openCards[chatID]
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
func (b *Bot) closeOpenCardFor(ctx context.Context, chatID, user int64) {
	b.mu.Lock()
	c := b.openCards[chatID]
	b.mu.Unlock()
	switch {
	case c == nil:
	case c.kind == "approval" && c.user == user:
		b.closeOpenCard(ctx, chatID, "approval", "❌ <i>Denied: a new message came first.</i>")
	case c.user == user:
		b.closeOpenCard(ctx, chatID, "question", "💬 <i>Answered by message.</i>")
	}
}

func (b *Bot) closeCard(ctx context.Context, c *card, line string) {
	if err := b.tg.EditHTML(ctx, c.chatID, c.msgID, c.html+"\n\n"+line, nil); err != nil {
		b.logger.Debug("close card", "chat", c.chatID, "err", err)
		b.tg.RemoveKeyboard(ctx, c.chatID, c.msgID)
	}
}

func (b *Bot) sendQuestion(ctx context.Context, chatID, user int64, replyTo int, q *agent.Question) {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, opt := range q.Options {
		data := callback.Data{Kind: callback.Option, Pending: q.PendingID, Option: i}.String()
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(render.Shorten(render.Visible(oneLine(opt)), 40), data)))
	}
	var markup any
	if len(rows) > 0 {
		markup = tgbotapi.NewInlineKeyboardMarkup(rows...)
	}
	m, last, err := b.sendBounded(ctx, chatID, replyTo, "❓ "+q.Text, "question", markup)
	if err != nil {
		b.logger.Error("send question", "chat", chatID, "err", err)
		return
	}
	if len(rows) > 0 {
		b.openCard(&card{chatID: chatID, msgID: m.MessageID, pendingID: q.PendingID, kind: "question", user: user, html: last, options: q.Options})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (b *Bot) sendApproval(ctx context.Context, chatID, user int64, replyTo int, a *agent.Approval) {
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
	m, err := b.tg.SendLong(ctx, chatID, replyTo, html, tgbotapi.NewInlineKeyboardMarkup(rows...))
	if err != nil {
		b.logger.Error("send approval", "chat", chatID, "err", err)
		return
	}
	if attach != nil {
		doc := tgbotapi.NewDocument(chatID, tgbotapi.FileBytes{Name: argsFileName, Bytes: attach})
		doc.ReplyToMessageID = m.MessageID
		if _, err := b.tg.Send(ctx, doc); err != nil {
			b.logger.Error("send approval arguments", "chat", chatID, "err", err)
		}
	}
	// Once answered, the card keeps what it asked and its outcome, not
	// when it would have expired.
	parts := render.Split(html, render.MaxMessageLen)
	b.openCard(&card{chatID: chatID, msgID: m.MessageID, pendingID: a.PendingID, kind: "approval", consent: a.Consent, user: user,
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
		var replies []*reply
		emitFor := func(chatID string) func(agent.Event) {
			id, _ := strconv.ParseInt(chatID, 10, 64)
			r := b.newReply(work, work, id, 0, 0, false, func() {
				b.closeOpenCard(work, id, "approval", "⌛ <i>Expired: denied.</i>")
			})
			replies = append(replies, r)
			return r.emit
		}
		if err := b.agent.Expire(work, time.Now(), emitFor); err != nil && work.Err() == nil {
			b.logger.Error("expire approvals", "err", err)
		}
		for _, r := range replies {
			r.finish()
		}
	}
}
