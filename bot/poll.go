package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// allowedUpdates are the update kinds the bot asks Telegram for.
var allowedUpdates = []string{"message", "callback_query"}

// pollLoop long-polls getUpdates until ctx ends and writes every batch to
// the inbox before asking for the next one: the offset that confirms a
// batch to Telegram is only sent once the batch is durable on disk.
func (b *Bot) pollLoop(ctx context.Context) {
	offset, ok := b.firstOffset(ctx)
	delay := b.cfg.RetryMin
	for ok && ctx.Err() == nil {
		items, err := b.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !telegram.Sleep(ctx, b.pollBackoff(err, delay)) {
				return
			}
			delay = min(delay*2, b.cfg.RetryMax)
			continue
		}
		delay = b.cfg.RetryMin
		if b.cfg.Heartbeat != nil {
			b.cfg.Heartbeat()
		}
		if len(items) == 0 {
			continue
		}
		b.cfg.Metrics.Updates(len(items))
		if !b.putBatch(ctx, items) {
			return
		}
		offset = items[len(items)-1].UpdateID + 1
		b.queue.Wake()
	}
}

// firstOffset is where polling starts: after the newest update stored.
func (b *Bot) firstOffset(ctx context.Context) (int64, bool) {
	for {
		max, err := b.store.InboxMaxUpdateID(ctx)
		if err == nil {
			if max > 0 {
				return max + 1, true
			}
			return 0, true
		}
		b.logger.Error("read inbox; retrying", "err", err)
		if !telegram.Sleep(ctx, b.cfg.RetryMin) {
			return 0, false
		}
	}
}

// pollBackoff logs a failed getUpdates and says how long to wait.
func (b *Bot) pollBackoff(err error, delay time.Duration) time.Duration {
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict {
		b.logger.Error("Telegram answered 409 Conflict: another instance is polling this bot token, or a webhook is set (deleteWebhook removes it); backing off",
			"err", err, "in", delay)
	} else {
		b.logger.Warn("getUpdates failed; backing off", "err", err, "in", delay)
	}
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return time.Duration(apiErr.RetryAfter) * time.Second
	}
	return delay
}

// putBatch writes a batch to the inbox, retrying until it is stored; false
// means ctx ended first.
func (b *Bot) putBatch(ctx context.Context, items []store.InboxItem) bool {
	for {
		// Not ctx: a batch Telegram handed over must reach the disk even
		// while shutting down, or the next offset would lose it.
		putCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := b.store.InboxPut(putCtx, items...)
		cancel()
		if err == nil {
			return true
		}
		b.logger.Error("write inbox; retrying before confirming the batch to Telegram", "err", err)
		if !telegram.Sleep(ctx, b.cfg.RetryMin) {
			return false
		}
	}
}

// getUpdates fetches one batch as inbox items.
func (b *Bot) getUpdates(ctx context.Context, offset int64) ([]store.InboxItem, error) {
	raws, err := b.tg.GetUpdates(ctx, offset, allowedUpdates)
	if err != nil {
		return nil, err
	}
	items := make([]store.InboxItem, 0, len(raws))
	for _, raw := range raws {
		var u tgbotapi.Update
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("decode update: %w", err)
		}
		items = append(items, store.InboxItem{UpdateID: int64(u.UpdateID), ChatID: chatKey(u), Payload: raw})
	}
	return items, nil
}

func chatKey(u tgbotapi.Update) string {
	if c := u.FromChat(); c != nil {
		return strconv.FormatInt(c.ID, 10)
	}
	return ""
}

// expireLoop denies approvals nobody answered in time, until ctx ends.
// The turns it continues run in work, which outlives ctx by the grace.
func (b *Bot) expireLoop(ctx, work context.Context) {
	tick := time.NewTicker(b.cfg.ExpireInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
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
