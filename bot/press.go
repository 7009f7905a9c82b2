package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/cards"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/store"
)

// pressAckAfter is how long a press waits for the agent's first event
// before it is acknowledged anyway; refusals come much sooner.
const pressAckAfter = 3 * time.Second

// A press is what a card's button asks of the agent, and what to say once
// the agent takes it.
type press struct {
	req  agent.Request
	ack  string // the answer to the press
	line string // added to the card as its buttons go
}

// handlePress handles a follow-up option or approval button, in the
// chat's lane: the press starts a turn.
func (b *Bot) handlePress(ctx context.Context, q *query, data callback.Data) {
	cq := q.CallbackQuery
	user := cq.From.ID
	if !b.isAllowed(user) {
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, this bot is private.", true)
		return
	}
	if !b.allowPress(ctx, cq) {
		return
	}
	p, refusal := b.pressOf(q, data)
	if refusal != "" {
		b.tg.AnswerCallback(ctx, cq.ID, refusal, true)
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
			b.tg.AnswerCallback(ctx, cq.ID, p.ack, false)
			cd := b.cards.Take(data.Pending)
			if cd == nil {
				// Pressed after a restart: the card's text is all there is.
				cd = &cards.Card{At: q.at, Key: q.key, MsgID: cq.Message.MessageID, HTML: render.Escape(withoutExpiry(cq.Message.Text))}
			}
			b.cards.Close(ctx, cd, p.line)
		})
	}
	timer := time.AfterFunc(pressAckAfter, onFirst)
	err := b.runTurn(ctx, q.at, q.key, user, 0, p.req, onFirst)
	timer.Stop()
	if accepted.Load() {
		return
	}
	switch {
	case errors.Is(err, agent.ErrNotYours):
		b.tg.AnswerCallback(ctx, cq.ID, "This is someone else's request; only they can answer it.", true)
	case errors.Is(err, agent.ErrStale):
		b.tg.AnswerCallback(ctx, cq.ID, "This request is no longer open.", true)
	case err == nil:
		onFirst()
	case errors.Is(err, store.ErrUnavailable):
		b.tg.AnswerCallback(ctx, cq.ID, "I cannot reach my database right now; this is handled as soon as it is back.", false)
	default:
		b.tg.AnswerCallback(ctx, cq.ID, "Sorry, something went wrong.", true)
	}
}

// pressOf says what a press asks, or why it is refused.
func (b *Bot) pressOf(q *query, data callback.Data) (press, string) {
	cq := q.CallbackQuery
	p := press{req: agent.Request{Caller: caller(cq.From.ID, q.key)}}
	id := data.Pending
	if data.Kind == callback.Option {
		p.req.Answer = &agent.Answer{PendingID: id, Option: data.Option}
		choice := buttonText(cq.Message, cq.Data)
		if c, ok := b.cards.Live(id); ok && data.Option < len(c.Options) {
			choice = c.Options[data.Option]
		}
		p.ack, p.line = "Got it", "→ <b>"+render.Escape(choice)+"</b>"
		return p, ""
	}
	consent := false
	if c, ok := b.cards.Live(id); ok {
		consent = c.Consent
	} else {
		label := buttonText(cq.Message, cq.Data)
		consent = label == cards.ConsentYes || label == cards.ConsentNo
	}
	switch data.Answer {
	case callback.Approve:
		p.req.Decision = &agent.Decision{PendingID: id, Approve: true}
		p.ack, p.line = "Approved", "✅ <i>Approved.</i>"
		if consent {
			p.ack, p.line = "You agreed", "✅ <i>You agreed.</i>"
		}
	case callback.Deny:
		p.req.Decision = &agent.Decision{PendingID: id}
		p.ack, p.line = "Denied", "❌ <i>Denied.</i>"
		if consent {
			p.ack, p.line = "You said no", "❌ <i>You said no.</i>"
		}
	case callback.Always:
		if !b.isAdmin(cq.From.ID) {
			return p, "Only admins can always allow a tool."
		}
		p.req.Decision = &agent.Decision{PendingID: id, Approve: true, Always: true}
		p.ack, p.line = "Always allowed", "✅ <i>Approved, and always allowed from now on.</i>"
	}
	return p, ""
}

// withoutExpiry drops a card's last line when it says when the card
// expires: an answered card no longer does.
func withoutExpiry(text string) string {
	if i := strings.LastIndexByte(text, '\n'); i >= 0 && strings.HasPrefix(text[i+1:], cards.ExpiryPrefix) {
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
