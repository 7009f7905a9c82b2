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
// update without a chat.
func ChatKey(u tgbotapi.Update) string {
	if c := u.FromChat(); c != nil {
		return strconv.FormatInt(c.ID, 10)
	}
	return ""
}

// Poll long-polls getUpdates until ctx ends and writes every batch to the
// inbox before asking for the next one: the offset that confirms a batch
// to Telegram is only sent once the batch is durable on disk.
func (r *Receiver) Poll(ctx context.Context) {
	offset, ok := r.firstOffset(ctx)
	delay := r.cfg.RetryMin
	for ok && ctx.Err() == nil {
		items, err := r.getUpdates(ctx, offset)
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
		if len(items) == 0 {
			continue
		}
		r.cfg.Metrics.Updates(len(items))
		if !r.store(ctx, items) {
			return
		}
		offset = items[len(items)-1].UpdateID + 1
		r.cfg.Arrived(items[0].UpdateID)
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
// means ctx ended first.
func (r *Receiver) store(ctx context.Context, items []store.InboxItem) bool {
	for {
		// Not ctx: a batch Telegram handed over must reach the disk even
		// while shutting down, or the next offset would lose it.
		putCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.cfg.Inbox.InboxPut(putCtx, items...)
		cancel()
		if err == nil {
			return true
		}
		r.logger.Error("write inbox; retrying before confirming the batch to Telegram", "err", err)
		if !telegram.Sleep(ctx, r.cfg.RetryMin) {
			return false
		}
	}
}

// getUpdates fetches one batch as inbox items, each update's raw JSON
// kept so that fields this library version does not know survive.
func (r *Receiver) getUpdates(ctx context.Context, offset int64) ([]store.InboxItem, error) {
	raws, err := r.cfg.TG.GetUpdates(ctx, offset, Allowed)
	if err != nil {
		return nil, err
	}
	items := make([]store.InboxItem, 0, len(raws))
	for _, raw := range raws {
		var u tgbotapi.Update
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("decode update: %w", err)
		}
		items = append(items, store.InboxItem{UpdateID: int64(u.UpdateID), ChatID: ChatKey(u), Payload: raw})
	}
	return items, nil
}
