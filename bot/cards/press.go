package cards

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// pressAckAfter is how long a press waits for the agent's first event
// before it is acknowledged anyway; refusals come much sooner.
const pressAckAfter = 3 * time.Second

// Press answers cq, a press of a card's button with data at place at in
// conversation key, from a user the bot admitted, by the turn it asks
// for, which turn runs (the bot's, in the chat's lane; onFirst before
// its first event). The card loses its buttons once the agent takes the
// press; a press it refuses is told why.
func (d *Deck) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, data callback.Data, turn func(req agent.Request, onFirst func()) error) {
	p, refusal := d.PressOf(cq, mcpgram.Caller{UserID: strconv.FormatInt(cq.From.ID, 10), ChatID: key}, data)
	if refusal != "" {
		d.TG.AnswerCallback(ctx, cq.ID, refusal, true)
		return
	}

	// The agent refuses a press (ErrNotYours, ErrStale) at once and emits
	// nothing; its first event means it accepted. A model slow to emit
	// must not leave the button spinning, so a timer accepts it too.
	var once sync.Once
	var accepted atomic.Bool
	onFirst := func() {
		once.Do(func() {
			accepted.Store(true)
			d.TG.AnswerCallback(ctx, cq.ID, p.Ack, false)
			d.Answered(ctx, cq, at, key, data.Pending, p.Line)
		})
	}
	timer := time.AfterFunc(pressAckAfter, onFirst)
	err := turn(p.Req, onFirst)
	timer.Stop()
	if accepted.Load() {
		return
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		d.TG.AnswerCallback(ctx, cq.ID, "This is someone else's request; only they can answer it.", true)
	case errors.Is(err, agent.ErrStale):
		d.TG.AnswerCallback(ctx, cq.ID, "This request is no longer open.", true)
	case err == nil:
		onFirst()
	case errors.Is(err, store.ErrUnavailable):
		d.TG.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; this is handled as soon as it is back.", false)
	default:
		d.TG.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
	}
}

// A Press is what a card's button asks of the agent, and what to say once
// the agent takes it.
type Press struct {
	Req  agent.Request
	Ack  string // the answer to the press
	Line string // added to the card as its buttons go
}

// PressOf says what cq, a press of a card's button with data, asks of
// the agent for caller, or why it is refused (refusal, for the presser).
// A card this instance did not keep (pressed after a restart) is read
// from the labels of its buttons.
func (d *Deck) PressOf(cq *tgbotapi.CallbackQuery, caller mcpgram.Caller, data callback.Data) (p Press, refusal string) {
	p.Req.Caller = caller
	id := data.Pending
	if data.Kind == callback.Option {
		p.Req.Answer = &agent.Answer{PendingID: id, Option: data.Option}
		choice := buttonText(cq.Message, cq.Data)
		if c, ok := d.Live(id); ok && data.Option < len(c.Options) {
			choice = c.Options[data.Option]
		}
		p.Ack, p.Line = "Got it", "→ <b>"+render.Escape(choice)+"</b>"
		return p, ""
	}
	consent := false
	if c, ok := d.Live(id); ok {
		consent = c.Consent
	} else {
		label := buttonText(cq.Message, cq.Data)
		consent = label == consentYes || label == consentNo
	}
	switch data.Answer {
	case callback.Approve:
		p.Req.Decision = &agent.Decision{PendingID: id, Approve: true}
		p.Ack, p.Line = "Approved", "✅ <i>Approved.</i>"
		if consent {
			p.Ack, p.Line = "You agreed", "✅ <i>You agreed.</i>"
		}
	case callback.Deny:
		p.Req.Decision = &agent.Decision{PendingID: id}
		p.Ack, p.Line = "Denied", "❌ <i>Denied.</i>"
		if consent {
			p.Ack, p.Line = "You said no", "❌ <i>You said no.</i>"
		}
	case callback.Always:
		if !d.IsAdmin(cq.From.ID) {
			return p, "Only admins can always allow a tool."
		}
		p.Req.Decision = &agent.Decision{PendingID: id, Approve: true, Always: true}
		p.Ack, p.Line = "Always allowed", "✅ <i>Approved, and always allowed from now on.</i>"
	}
	return p, ""
}

// Answered takes the buttons off the card of pendingID, which cq
// pressed at place at in the conversation key, once the agent took the
// press, and appends line to it. A card this instance did not keep
// (pressed after a restart) is closed with its message's text, all there
// is of it.
func (d *Deck) Answered(ctx context.Context, cq *tgbotapi.CallbackQuery, at telegram.Place, key string, pendingID int64, line string) {
	c := d.Take(pendingID)
	if c == nil {
		c = &Card{At: at, Key: key, MsgID: cq.Message.MessageID, HTML: render.Escape(withoutExpiry(cq.Message.Text))}
	}
	d.Close(ctx, c, line)
}

// withoutExpiry drops a card's last line when it says when the card
// expires: an answered card no longer does.
func withoutExpiry(text string) string {
	if i := strings.LastIndexByte(text, '\n'); i >= 0 && strings.HasPrefix(text[i+1:], expiryPrefix) {
		return strings.TrimRight(text[:i], "\n")
	}
	return text
}

// buttonText finds the label of the button with data on m.
func buttonText(m *tgbotapi.Message, data string) string {
	if m == nil || m.ReplyMarkup == nil {
		return ""
	}
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		for _, btn := range row {
			if btn.CallbackData != nil && *btn.CallbackData == data {
				return btn.Text
			}
		}
	}
	return ""
}
