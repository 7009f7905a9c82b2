package apps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/callback"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// AskApproval sends the card of an app's request, pending, in user's
// private chat with the bot (where the app was opened), with its
// buttons.
func (a *Apps) AskApproval(ctx context.Context, user, pending int64, html string) error {
	button := func(text string, answer callback.Answer) tgbotapi.InlineKeyboardButton {
		return tgbotapi.NewInlineKeyboardButtonData(text, callback.Data{Kind: callback.AppVerdict, Pending: pending, Answer: answer}.String())
	}
	markup := tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(button("✅ Approve", callback.Approve), button("❌ Deny", callback.Deny)))
	if _, err := a.tg.SendLong(ctx, telegram.In(user), 0, html, markup); err != nil {
		return fmt.Errorf("send the approval of an app's request: %w", err)
	}
	return nil
}

// Press answers a press of an app's approval card: only by the user the
// app asked for, only while the request waits; the app's request runs
// where it waits (see Host).
func (a *Apps) Press(ctx context.Context, cq *tgbotapi.CallbackQuery, data callback.Data) {
	p, err := a.store.GetPending(ctx, data.Pending)
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		a.opts.Logger.Error("read an app's approval", "err", err)
		a.tg.AnswerCallback(ctx, cq.ID, "Could not answer just now: try again in a moment.", true)
		return
	case err != nil || !isAppApproval(p):
		a.tg.AnswerCallback(ctx, cq.ID, "This button is no longer valid.", true)
		return
	case p.UserID != strconv.FormatInt(cq.From.ID, 10):
		a.tg.AnswerCallback(ctx, cq.ID, "Only the person who opened the app can answer this.", true)
		return
	case !p.IsOpen() || time.Since(p.CreatedAt) > approvalTTL:
		a.tg.AnswerCallback(ctx, cq.ID, "This request no longer waits.", true)
		return
	}
	resolution, ack, line := "denied", "Denied", "❌ <i>Denied.</i>"
	if data.Answer == callback.Approve {
		resolution, ack, line = "approved", "Approved", "✅ <i>Approved.</i>"
	}
	if err := a.store.ResolvePending(ctx, p.ID, resolution, ""); err != nil {
		if !errors.Is(err, store.ErrResolved) {
			a.opts.Logger.Error("answer an app's approval", "err", err)
		}
		a.tg.AnswerCallback(ctx, cq.ID, "This request no longer waits.", true)
		return
	}
	a.tg.AnswerCallback(ctx, cq.ID, ack, false)
	html := render.Escape(cq.Message.Text) + "\n" + line
	if err := a.tg.EditHTML(ctx, cq.Message.Chat.ID, cq.Message.MessageID, html, nil); err != nil {
		a.opts.Logger.Debug("edit an app's approval card", "err", err)
	}
}
