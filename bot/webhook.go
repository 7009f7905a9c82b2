package bot

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// secretHeader carries the webhook's secret token in Telegram's requests.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdateBytes bounds one update's JSON: a message is at most 4096
// characters with its entities, so a few MiB is far more than Telegram
// sends, and little for an attacker to make the bot read.
const maxUpdateBytes = 4 << 20

// WebhookHandler returns the handler of Telegram's webhook requests, for
// the HTTP endpoint: it refuses any request without the secret token, and
// answers 200 only once the update is in the inbox, so that Telegram sends
// again whatever the bot could not store, as polling confirms a batch only
// once it is stored.
func (b *Bot) WebhookHandler() http.Handler { return http.HandlerFunc(b.serveWebhook) }

func (b *Bot) serveWebhook(w http.ResponseWriter, r *http.Request) {
	got, want := r.Header.Get(secretHeader), b.cfg.WebhookSecret
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		b.refusedWebhook(r)
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdateBytes))
	if err != nil {
		http.Error(w, "update too large or cut short", http.StatusBadRequest)
		return
	}
	var u tgbotapi.Update
	if err := json.Unmarshal(body, &u); err != nil || u.UpdateID <= 0 {
		b.logger.Warn("webhook request is not an update; refused", "err", err)
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	// Not the request's context: an update that is being written must
	// reach the disk even if Telegram stops waiting for the answer.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	defer cancel()
	it := store.InboxItem{UpdateID: int64(u.UpdateID), ChatID: chatKey(u), Payload: body}
	if err := b.store.InboxPut(ctx, it); err != nil {
		b.logger.Error("write inbox; Telegram will send the update again", "update_id", u.UpdateID, "err", err)
		http.Error(w, "cannot store the update now", http.StatusServiceUnavailable)
		return
	}
	b.cfg.Metrics.Updates(1)
	b.queue.Arrived(it.UpdateID)
	w.WriteHeader(http.StatusOK)
}

// refusedWebhook logs a request without the secret, once a minute at
// most: anyone who finds the URL can send them.
func (b *Bot) refusedWebhook(r *http.Request) {
	now := time.Now().UnixNano()
	last := b.webhookRefused.Load()
	if now-last < int64(time.Minute) || !b.webhookRefused.CompareAndSwap(last, now) {
		return
	}
	b.logger.Warn("webhook request without the right secret token; refused (logged once a minute)", "remote", r.RemoteAddr)
}

// watchWebhook registers the webhook when WebhookURL is set, then asks
// Telegram how deliveries go every PollTimeout until ctx ends: an answer
// is the heartbeat that polling gives, and a delivery error is logged.
func (b *Bot) watchWebhook(ctx context.Context) error {
	if b.cfg.WebhookURL != "" {
		if err := b.tg.SetWebhook(ctx, b.cfg.WebhookURL, b.cfg.WebhookSecret, allowedUpdates); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("bot: Telegram refused TELEGRAM_WEBHOOK_URL: " + err.Error())
		}
		b.logger.Info("webhook registered", "url", b.cfg.WebhookURL)
	}
	var lastErr int64
	for {
		info, err := b.tg.GetWebhookInfo(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			b.logger.Warn("getWebhookInfo failed", "err", err)
		default:
			if b.cfg.Heartbeat != nil {
				b.cfg.Heartbeat()
			}
			if info.URL == "" {
				b.logger.Error("no webhook is set: Telegram keeps the updates until one is (set TELEGRAM_WEBHOOK_URL, or run in polling mode)")
			}
			if info.LastErrorDate != lastErr && info.LastErrorMessage != "" {
				lastErr = info.LastErrorDate
				b.logger.Warn("Telegram could not deliver to the webhook", "error", info.LastErrorMessage, "pending", info.PendingUpdates)
			}
		}
		if !telegram.Sleep(ctx, b.cfg.PollTimeout) {
			return nil
		}
	}
}
