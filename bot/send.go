package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/mcpgram/mcpgram/bot/render"
)

// errNotModified is Telegram's answer to an edit that changes nothing; it
// means the message already shows what we wanted.
func isNotModified(err error) bool {
	var e *tgbotapi.Error
	return errors.As(err, &e) && strings.Contains(e.Message, "message is not modified")
}

func isParseError(err error) bool {
	var e *tgbotapi.Error
	return errors.As(err, &e) && strings.Contains(e.Message, "can't parse entities")
}

// retryDelay says whether err is worth another try, and after how long.
func (b *Bot) retryDelay(err error, attempt int) (time.Duration, bool) {
	backoff := min(b.cfg.RetryMin<<attempt, b.cfg.RetryMax)
	var e *tgbotapi.Error
	if errors.As(err, &e) {
		switch {
		case e.RetryAfter > 0: // 429; UploadFiles leaves Code 0 but keeps RetryAfter
			return time.Duration(e.RetryAfter) * time.Second, true
		case e.Code == http.StatusTooManyRequests:
			return backoff, true
		case e.Code >= 500:
			return backoff, true
		default:
			return 0, false
		}
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// A proxy's HTML error page: treat as a server error.
		return backoff, true
	}
	// Network errors and timeouts.
	return backoff, true
}

// request performs c with retries: 429 waits retry_after, 5xx and network
// errors back off, "message is not modified" counts as success. It suits
// the methods that return true (answerCallbackQuery, sendChatAction,
// deleteMessage), which Send cannot decode.
func (b *Bot) request(ctx context.Context, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	for attempt := 0; ; attempt++ {
		resp, err := b.api.Request(c)
		if err == nil {
			return resp, nil
		}
		if isNotModified(err) {
			return &tgbotapi.APIResponse{Ok: true}, nil
		}
		delay, retry := b.retryDelay(err, attempt)
		if !retry || attempt >= b.cfg.MaxRetries || ctx.Err() != nil {
			return nil, err
		}
		b.logger.Debug("telegram call failed; retrying", "err", err, "in", delay)
		if !sleep(ctx, delay) {
			return nil, err
		}
	}
}

// send performs c and decodes the message Telegram returns.
func (b *Bot) send(ctx context.Context, c tgbotapi.Chattable) (tgbotapi.Message, error) {
	resp, err := b.request(ctx, c)
	if err != nil {
		return tgbotapi.Message{}, err
	}
	var m tgbotapi.Message
	if len(resp.Result) > 0 && resp.Result[0] == '{' {
		if err := json.Unmarshal(resp.Result, &m); err != nil {
			return m, fmt.Errorf("decode sent message: %w", err)
		}
	}
	return m, nil
}

// sendHTML sends one part of HTML, falling back to plain text when
// Telegram rejects the markup, so nothing is ever silently dropped.
func (b *Bot) sendHTML(ctx context.Context, chatID int64, replyTo int, html string, markup any) (tgbotapi.Message, error) {
	msg := tgbotapi.NewMessage(chatID, html)
	msg.ReplyToMessageID = replyTo
	msg.AllowSendingWithoutReply = true
	msg.ParseMode = tgbotapi.ModeHTML
	msg.DisableWebPagePreview = true
	msg.ReplyMarkup = markup
	m, err := b.send(ctx, msg)
	if err != nil && isParseError(err) {
		b.logger.Warn("Telegram rejected our HTML; sending plain text", "err", err)
		msg.Text, msg.ParseMode = render.PlainText(html), ""
		m, err = b.send(ctx, msg)
	}
	return m, err
}

// editHTML edits a message to html, with the same plain-text fallback.
func (b *Bot) editHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error {
	edit := tgbotapi.NewEditMessageText(chatID, msgID, html)
	edit.ParseMode = tgbotapi.ModeHTML
	edit.DisableWebPagePreview = true
	edit.ReplyMarkup = markup
	_, err := b.request(ctx, edit)
	if err != nil && isParseError(err) {
		edit.Text, edit.ParseMode = render.PlainText(html), ""
		_, err = b.request(ctx, edit)
	}
	return err
}

// sendLong splits html into parts and sends each, the first as a reply to
// message replyTo (0: none), markup on the last one.
func (b *Bot) sendLong(ctx context.Context, chatID int64, replyTo int, html string, markup any) (tgbotapi.Message, error) {
	parts := render.Split(html, render.MaxMessageLen)
	if len(parts) == 0 {
		parts = []string{"…"}
	}
	var last tgbotapi.Message
	for i, p := range parts {
		var mk any
		if i == len(parts)-1 {
			mk = markup
		}
		rt := 0
		if i == 0 {
			rt = replyTo
		}
		m, err := b.sendHTML(ctx, chatID, rt, p, mk)
		var apiErr *tgbotapi.Error
		if err != nil && errors.As(err, &apiErr) && apiErr.Code == http.StatusBadRequest {
			// Telegram disagrees with our HTML or our count: send the
			// part as plain text in smaller pieces rather than drop it.
			b.logger.Warn("Telegram rejected a part; sending it as plain text", "err", err)
			for _, piece := range render.SplitPlain(render.PlainText(p), render.MaxMessageLen/2) {
				msg := tgbotapi.NewMessage(chatID, piece)
				msg.ReplyMarkup = mk
				if m, err = b.send(ctx, msg); err != nil {
					break
				}
			}
		}
		if err != nil {
			return last, fmt.Errorf("send part %d of %d: %w", i+1, len(parts), err)
		}
		last = m
	}
	return last, nil
}

// removeKeyboard takes the buttons off a message.
func (b *Bot) removeKeyboard(ctx context.Context, chatID int64, msgID int) {
	empty := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	edit := tgbotapi.NewEditMessageReplyMarkup(chatID, msgID, empty)
	if _, err := b.request(ctx, edit); err != nil {
		b.logger.Debug("remove keyboard", "chat", chatID, "err", err)
	}
}

// answerCallback answers a button press so the button stops spinning.
func (b *Bot) answerCallback(ctx context.Context, id, text string, alert bool) {
	cb := tgbotapi.NewCallback(id, text)
	cb.ShowAlert = alert
	if _, err := b.request(ctx, cb); err != nil {
		b.logger.Debug("answerCallbackQuery", "err", err)
	}
}
