// Package updates receives Telegram's updates into the durable inbox, by
// long polling or as a webhook, and confirms each to Telegram only once it
// is stored: a crash between the two makes Telegram send it again, never
// lose it. What happens to an update next is package dispatch's business.
package updates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// Allowed are the update kinds the bot asks Telegram for.
var Allowed = []string{"message", "callback_query"}

// An Inbox stores updates; *sqlite.DB is one.
type Inbox interface {
	InboxPut(ctx context.Context, items ...store.InboxItem) error
	InboxMaxUpdateID(ctx context.Context) (int64, error)
}

// Options are a Receiver's optional settings.
type Options struct {
	// Heartbeat, when set, is called after each answer from Telegram:
	// getUpdates, or getWebhookInfo in webhook mode.
	Heartbeat func()
	Metrics   *metrics.Metrics
	// PollTimeout is the long poll's timeout, and in webhook mode how often
	// getWebhookInfo is asked; RetryMin and RetryMax bound the backoff.
	PollTimeout, RetryMin, RetryMax time.Duration
	// Secret is the webhook's secret token; URL, when set, is registered
	// with setWebhook by Watch.
	Secret, URL string
	Logger      *slog.Logger
}

// config is what New was given.
type config struct {
	Options
	TG      *telegram.Client
	Inbox   Inbox
	Arrived func(updateID int64)
}

// A Receiver takes updates in: Poll, or Watch with ServeHTTP as the
// webhook's handler.
type Receiver struct {
	cfg       config
	logger    *slog.Logger
	refusedAt atomic.Int64 // when a refused webhook request was last logged, in Unix ns
}

// New returns a Receiver that takes updates from tg into inbox, and
// tells arrived of each stored batch by its first update id
// (dispatch.Queue.Arrived).
func New(tg *telegram.Client, inbox Inbox, arrived func(updateID int64), opts Options) *Receiver {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := config{Options: opts, TG: tg, Inbox: inbox, Arrived: arrived}
	return &Receiver{cfg: cfg, logger: cfg.Logger}
}

func (r *Receiver) heartbeat() {
	if r.cfg.Heartbeat != nil {
		r.cfg.Heartbeat()
	}
}

// ChatKey is the inbox's chat of an update: its chat's id, or "" for an
// update without a chat (a press of a button on an inline-mode message
// has no message, so no chat).
func ChatKey(u tgbotapi.Update) string {
	var c *tgbotapi.Chat
	switch {
	case u.Message != nil:
		c = u.Message.Chat
	case u.EditedMessage != nil:
		c = u.EditedMessage.Chat
	case u.ChannelPost != nil:
		c = u.ChannelPost.Chat
	case u.EditedChannelPost != nil:
		c = u.EditedChannelPost.Chat
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil:
		c = u.CallbackQuery.Message.Chat
	}
	if c == nil {
		return ""
	}
	return strconv.FormatInt(c.ID, 10)
}

// updateID reads only the update_id of an update's JSON: what confirms
// it, even when the rest does not decode.
func updateID(raw []byte) (int64, error) {
	var head struct {
		UpdateID int64 `json:"update_id"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return 0, err
	}
	if head.UpdateID <= 0 {
		return 0, errors.New("no update_id")
	}
	return head.UpdateID, nil
}

// item turns an update whose id is known into an inbox item, or reports
// false, having logged that it is dropped, when the bot cannot read it (a
// field of a type this library does not expect, or a panic): such an
// update would fail again on every try, so it is confirmed all the same.
func (r *Receiver) item(id int64, raw []byte) (it store.InboxItem, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			r.logger.Error("update dropped: reading it panicked", "update_id", id, "panic", fmt.Sprint(p))
			ok = false
		}
	}()
	u, err := Decode(raw)
	if err != nil {
		r.logger.Warn("update dropped: it does not decode", "update_id", id, "err", err)
		return store.InboxItem{}, false
	}
	return store.InboxItem{UpdateID: id, ChatID: ChatKey(u), Payload: raw}, true
}

// Poll long-polls getUpdates until ctx ends and writes every batch to the
// inbox before asking for the next one: the offset that confirms a batch
// to Telegram is only sent once the batch is durable on disk.
func (r *Receiver) Poll(ctx context.Context) {
	offset, ok := r.firstOffset(ctx)
	delay := r.cfg.RetryMin
	for ok && ctx.Err() == nil {
		items, next, err := r.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !telegram.Sleep(ctx, r.backoff(err, delay)) {
				return
			}
			delay = min(delay*2, r.cfg.RetryMax)
			continue
		}
		delay = r.cfg.RetryMin
		r.heartbeat()
		if len(items) > 0 {
			r.cfg.Metrics.Updates(len(items))
			if !r.store(ctx, items) {
				return
			}
			r.cfg.Arrived(items[0].UpdateID)
		}
		offset = max(offset, next)
	}
}

// firstOffset is where polling starts: after the newest update stored.
func (r *Receiver) firstOffset(ctx context.Context) (int64, bool) {
	for {
		newest, err := r.cfg.Inbox.InboxMaxUpdateID(ctx)
		if err == nil {
			if newest > 0 {
				return newest + 1, true
			}
			return 0, true
		}
		r.logger.Error("read inbox; retrying", "err", err)
		if !telegram.Sleep(ctx, r.cfg.RetryMin) {
			return 0, false
		}
	}
}

// backoff logs a failed getUpdates and says how long to wait.
func (r *Receiver) backoff(err error, delay time.Duration) time.Duration {
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict {
		r.logger.Error("Telegram answered 409 Conflict: another instance is polling this bot token, or a webhook is set (deleteWebhook removes it); backing off",
			"err", err, "in", delay)
	} else {
		r.logger.Warn("getUpdates failed; backing off", "err", err, "in", delay)
	}
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return time.Duration(apiErr.RetryAfter) * time.Second
	}
	return delay
}

// store writes a batch to the inbox, retrying until it is stored; false
// means ctx ended first. A batch whose writing panics is written an
// update at a time, and an update that panics on its own is dropped with
// a log line: retried, it would stop the intake for good.
func (r *Receiver) store(ctx context.Context, items []store.InboxItem) bool {
	for {
		err := r.put(items)
		var p panicked
		if errors.As(err, &p) && len(items) > 1 {
			for _, it := range items {
				if !r.store(ctx, []store.InboxItem{it}) {
					return false
				}
			}
			return true
		}
		switch {
		case err == nil:
			return true
		case errors.As(err, &p):
			r.logger.Error("update dropped: storing it panicked", "update_id", items[0].UpdateID, "panic", p.value)
			return true
		}
		r.logger.Error("write inbox; retrying before confirming the batch to Telegram", "err", err)
		if !telegram.Sleep(ctx, r.cfg.RetryMin) {
			return false
		}
	}
}

// A panicked error is a panic of the inbox, recovered.
type panicked struct{ value string }

func (p panicked) Error() string { return "panic: " + p.value }

// put writes items to the inbox once.
func (r *Receiver) put(items []store.InboxItem) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicked{fmt.Sprint(p)}
		}
	}()
	// Not ctx: a batch Telegram handed over must reach the disk even
	// while shutting down, or the next offset would lose it.
	putCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.cfg.Inbox.InboxPut(putCtx, items...)
}

// getUpdates fetches one batch as inbox items, each update's raw JSON
// kept so that fields this library version does not know survive, and
// the offset that confirms the whole batch. Updates the bot cannot read
// are left out (and logged), but confirmed with the rest.
func (r *Receiver) getUpdates(ctx context.Context, offset int64) ([]store.InboxItem, int64, error) {
	raws, err := r.cfg.TG.GetUpdates(ctx, offset, Allowed)
	if err != nil {
		return nil, 0, err
	}
	items := make([]store.InboxItem, 0, len(raws))
	next := int64(0)
	for _, raw := range raws {
		id, err := updateID(raw)
		if err != nil {
			// Telegram numbers every update; one without a number cannot
			// be confirmed on its own, only by those after it.
			r.logger.Error("update dropped: no update_id", "err", err, "bytes", len(raw))
			continue
		}
		next = max(next, id+1)
		if it, ok := r.item(id, raw); ok {
			items = append(items, it)
		}
	}
	if len(raws) > 0 && next == 0 {
		return nil, 0, errors.New("no update in the batch has an update_id")
	}
	return items, next, nil
}
