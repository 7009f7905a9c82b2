package cards_test

import (
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/cards"
)

// A press of a card this instance did not keep (pressed after a
// restart) is read from its message's buttons: the option's label, and
// whether an approval asked for consent.
func TestPressOfAfterRestart(t *testing.T) {
	const admin, user = 1, 2
	d := &cards.Deck{IsAdmin: func(id int64) bool { return id == admin }}
	caller := mcpgram.Caller{UserID: "2", ChatID: "2"}
	pressed := func(from int64, data callback.Data, labels ...string) *tgbotapi.CallbackQuery {
		var row []tgbotapi.InlineKeyboardButton
		for i, l := range labels {
			other := callback.Data{Kind: callback.Option, Pending: 9, Option: 10 + i}
			if i == 0 {
				other = data
			}
			row = append(row, tgbotapi.NewInlineKeyboardButtonData(l, other.String()))
		}
		m := &tgbotapi.Message{MessageID: 5, ReplyMarkup: &tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{row}}}
		return &tgbotapi.CallbackQuery{From: &tgbotapi.User{ID: from}, Message: m, Data: data.String()}
	}
	verdict := func(a callback.Answer) callback.Data {
		return callback.Data{Kind: callback.Verdict, Pending: 9, Answer: a}
	}
	for _, c := range []struct {
		name      string
		cq        *tgbotapi.CallbackQuery
		ack, line string
		refusal   string
		approve   bool
		decided   bool
	}{
		{"an option", pressed(user, callback.Data{Kind: callback.Option, Pending: 9, Option: 1}, "Rome <b>", "Paris"),
			"Got it", "→ <b>Rome &lt;b&gt;</b>", "", false, false},
		{"an approval", pressed(user, verdict(callback.Approve), "✅ Approve", "❌ Deny"), "Approved", "✅ <i>Approved.</i>", "", true, true},
		{"a consent", pressed(user, verdict(callback.Approve), "✅ I agree", "❌ No"), "You agreed", "✅ <i>You agreed.</i>", "", true, true},
		{"a consent refused", pressed(user, verdict(callback.Deny), "❌ No", "✅ I agree"), "You said no", "❌ <i>You said no.</i>", "", false, true},
		{"always by a user", pressed(user, verdict(callback.Always), "♾ Always allow x"), "", "", "Only admins can always allow a tool.", false, false},
		{"always by an admin", pressed(admin, verdict(callback.Always), "♾ Always allow x"), "Always allowed", "✅ <i>Approved, and always allowed from now on.</i>", "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, refusal := d.PressOf(c.cq, caller, mustDecode(t, c.cq.Data))
			if refusal != c.refusal || p.Ack != c.ack || p.Line != c.line {
				t.Errorf("PressOf = %q, %q, refusal %q; want %q, %q, refusal %q", p.Ack, p.Line, refusal, c.ack, c.line, c.refusal)
			}
			if refusal != "" {
				return
			}
			if p.Req.Caller != caller {
				t.Errorf("the request's caller = %+v, want %+v", p.Req.Caller, caller)
			}
			if got := p.Req.Decision != nil; got != c.decided {
				t.Fatalf("a decision: %v, want %v", got, c.decided)
			}
			if c.decided && (p.Req.Decision.PendingID != 9 || p.Req.Decision.Approve != c.approve) {
				t.Errorf("decision = %+v, want pending 9, approve %v", *p.Req.Decision, c.approve)
			}
			if !c.decided && (p.Req.Answer == nil || p.Req.Answer.PendingID != 9 || p.Req.Answer.Option != 1) {
				t.Errorf("answer = %+v, want pending 9, option 1", p.Req.Answer)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) callback.Data {
	t.Helper()
	d, err := callback.Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
