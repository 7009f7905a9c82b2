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
	"github.com/mcpgram/mcpgram/store"
)

// pollLoop long-polls getUpdates and writes every batch to the inbox
// before asking for the next one: the offset that confirms a batch to
// Telegram is only sent once the batch is durable on disk.
func (b *Bot) pollLoop(ctx context.Context) {
	var offset int64
	for {
		max, err := b.store.InboxMaxUpdateID(ctx)
		if err == nil {
			if max > 0 {
				offset = max + 1
			}
			break
		}
		b.logger.Error("read inbox; retrying", "err", err)
		if !sleep(ctx, b.cfg.RetryMin) {
			return
		}
	}
	timeout := max(1, int(b.cfg.PollTimeout/time.Second)) // 0 would be a busy loop
	delay := b.cfg.RetryMin
	for ctx.Err() == nil {
		items, err := b.getUpdates(offset, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var apiErr *tgbotapi.Error
			if errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict {
				b.logger.Error("Telegram answered 409 Conflict: another instance is polling this bot token, or a webhook is set (deleteWebhook removes it); backing off",
					"err", err, "in", delay)
			} else {
				b.logger.Warn("getUpdates failed; backing off", "err", err, "in", delay)
			}
			wait := delay
			if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
				wait = time.Duration(apiErr.RetryAfter) * time.Second
			}
			if !sleep(ctx, wait) {
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
		for {
			// Not ctx: a batch Telegram handed over must reach the disk even
			// while shutting down, or the next offset would lose it.
			putCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := b.store.InboxPut(putCtx, items...)
			cancel()
			if err == nil {
				break
			}
			b.logger.Error("write inbox; retrying before confirming the batch to Telegram", "err", err)
			if !sleep(ctx, b.cfg.RetryMin) {
				return
			}
		}
		offset = items[len(items)-1].UpdateID + 1
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// getUpdates fetches one batch, keeping each update's raw JSON for the
// inbox so that fields this library version does not know survive.
func (b *Bot) getUpdates(offset int64, timeout int) ([]store.InboxItem, error) {
	resp, err := b.poll.Request(tgbotapi.UpdateConfig{Offset: int(offset), Timeout: timeout, Limit: 100,
		AllowedUpdates: []string{"message", "callback_query"}})
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, fmt.Errorf("decode updates: %w", err)
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

// dispatchLoop hands inbox items to chat workers: at start the ones a
// previous run left unprocessed, then each batch the poller stores.
func (b *Bot) dispatchLoop(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	for {
		b.dispatch(ctx)
		select {
		case <-ctx.Done():
			return
		case <-b.wake:
		case <-tick.C:
		case <-prune.C:
			b.pruneInbox(ctx)
		}
	}
}

func (b *Bot) dispatch(ctx context.Context) {
	// Read on past the updates already handed out: those still queued
	// behind a long turn would otherwise fill every page, and no chat
	// would get anything newer until that backlog cleared. Ids only grow
	// (the poller stores batches in Telegram's order), so nothing new can
	// appear below the mark; at start it is 0 and everything left
	// unprocessed by the last run is read. The mark is also what keeps an
	// update from being handed out twice.
	for {
		items, err := b.store.InboxPendingAfter(ctx, b.dispatched, dispatchPage)
		if err != nil {
			if ctx.Err() == nil {
				b.logger.Error("read inbox", "err", err)
			}
			return
		}
		for _, it := range items {
			b.mu.Lock()
			if b.stopping {
				b.mu.Unlock()
				return
			}
			b.dispatched = it.UpdateID
			b.mu.Unlock()
			var u tgbotapi.Update
			if err := json.Unmarshal(it.Payload, &u); err != nil {
				b.logger.Error("undecodable update in inbox; dropping it", "update_id", it.UpdateID, "err", err)
				b.markDone(it.UpdateID)
				continue
			}
			b.route(it.UpdateID, u)
		}
		if len(items) < dispatchPage {
			return
		}
	}
}

// dispatchPage is how many inbox items the dispatcher reads at a time.
const dispatchPage = 1000

// A pruner can forget handled updates; *store.DB is one.
type pruner interface {
	InboxPrune(ctx context.Context, before time.Time) (int64, error)
}

// pruneInbox drops handled updates older than a day: Telegram keeps
// updates for 24 hours, so older ones can never come again.
func (b *Bot) pruneInbox(ctx context.Context) {
	p, ok := b.store.(pruner)
	if !ok {
		return
	}
	if n, err := p.InboxPrune(ctx, time.Now().Add(-48*time.Hour)); err != nil {
		b.logger.Warn("prune inbox", "err", err)
	} else if n > 0 {
		b.logger.Debug("pruned inbox", "updates", n)
	}
}

// markDone records that an update was handled. The write happens in
// doneLoop, off the reply's path: each commit is a synchronous=FULL fsync
// on the store's single writer, and hundreds of chats finishing at once
// would otherwise queue their fsyncs in front of the agents' writes.
//
// Handling is at least once: a crash after the reply went out and before
// its mark is committed (a few milliseconds) handles the update again
// after the restart. Marking first would instead risk losing the reply.
func (b *Bot) markDone(id int64) {
	b.doneCh <- id
}

// maxDoneBatch caps the marks committed together.
const maxDoneBatch = 256

// doneLoop commits done marks until doneCh is closed: every mark waiting
// when a commit starts goes into it, so one fsync serves all the updates
// that finished during the previous one, and a lone mark is not delayed.
func (b *Bot) doneLoop() {
	defer close(b.doneStopped)
	ids := make([]int64, 0, maxDoneBatch)
	for id := range b.doneCh {
		ids = append(ids[:0], id)
	more:
		for len(ids) < maxDoneBatch {
			select {
			case id, ok := <-b.doneCh:
				if !ok {
					break more
				}
				ids = append(ids, id)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := b.store.InboxDone(ctx, ids...); errors.Is(err, store.ErrNotFound) {
			b.logger.Warn("mark updates done: some were not in the inbox", "err", err)
		} else if err != nil {
			b.logger.Error("mark updates done; they will be handled again after a restart", "update_ids", ids, "err", err)
		}
		cancel()
	}
}

// expireLoop denies approvals nobody answered in time.
func (b *Bot) expireLoop(ctx context.Context) {
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
			r := b.newReply(b.baseCtx, id, 0, 0, false, func() {
				b.closeOpenCard(id, "approval", "⌛ <i>Expired: denied.</i>")
			})
			replies = append(replies, r)
			return r.emit
		}
		if err := b.agent.Expire(b.baseCtx, time.Now(), emitFor); err != nil && b.baseCtx.Err() == nil {
			b.logger.Error("expire approvals", "err", err)
		}
		for _, r := range replies {
			r.finish()
		}
	}
}
