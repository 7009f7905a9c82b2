package cards

import (
	"context"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
)

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
