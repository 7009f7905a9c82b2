package updates

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// secretHeader carries the webhook's secret token in Telegram's requests.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// maxUpdateBytes bounds one update's JSON: a message is at most 4096
// characters with its entities, so a few MiB is far more than Telegram
// sends, and little for an attacker to make the bot read.
const maxUpdateBytes = 4 << 20

// ServeHTTP takes Telegram's webhook requests: it refuses any request
// without the secret token, and answers 200 only once the update is in the
// inbox, so that Telegram sends again whatever could not be stored (503),
// as polling confirms a batch only once it is stored. An update the bot
// cannot read, or whose intake panics, is dropped with a log line and
// answered 200 all the same: sent again, it would fail again.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	got, want := req.Header.Get(secretHeader), r.cfg.Secret
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		r.refused(req)
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxUpdateBytes))
	if err != nil {
		http.Error(w, "update too large or cut short", http.StatusBadRequest)
		return
	}
	id, err := updateID(body)
	if err != nil {
		r.logger.Warn("webhook request is not an update; refused", "err", err)
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.logger.Error("update dropped: taking it in panicked", "update_id", id, "panic", fmt.Sprint(p))
			w.WriteHeader(http.StatusOK)
		}
	}()
	it, ok := r.item(id, body)
	if !ok {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err := r.put([]store.InboxItem{it}); err != nil {
		var p panicked
		if errors.As(err, &p) {
			r.logger.Error("update dropped: storing it panicked", "update_id", id, "panic", p.value)
			w.WriteHeader(http.StatusOK)
			return
		}
		r.logger.Error("write inbox; Telegram will send the update again", "update_id", id, "err", err)
		http.Error(w, "cannot store the update now", http.StatusServiceUnavailable)
		return
	}
	r.cfg.Metrics.Updates(1)
	r.cfg.Arrived(it.UpdateID)
	w.WriteHeader(http.StatusOK)
}

// refused logs a request without the secret, once a minute at most:
// anyone who finds the URL can send them.
func (r *Receiver) refused(req *http.Request) {
	now := time.Now().UnixNano()
	last := r.refusedAt.Load()
	if now-last < int64(time.Minute) || !r.refusedAt.CompareAndSwap(last, now) {
		return
	}
	r.logger.Warn("webhook request without the right secret token; refused (logged once a minute)", "remote", req.RemoteAddr)
}

// Watch registers the webhook when URL is set, then asks Telegram how
// deliveries go every PollTimeout until ctx ends: an answer is the
// heartbeat that polling gives, and a delivery error is logged.
func (r *Receiver) Watch(ctx context.Context) error {
	if r.cfg.URL != "" {
		if err := r.cfg.TG.SetWebhook(ctx, r.cfg.URL, r.cfg.Secret, Allowed); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("Telegram refused TELEGRAM_WEBHOOK_URL: " + err.Error())
		}
		r.logger.Info("webhook registered", "url", r.cfg.URL)
	}
	var lastErr int64
	for {
		info, err := r.cfg.TG.GetWebhookInfo(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			r.logger.Warn("getWebhookInfo failed", "err", err)
		default:
			r.heartbeat()
			if info.URL == "" {
				r.logger.Error("no webhook is set: Telegram keeps the updates until one is (set TELEGRAM_WEBHOOK_URL, or run in polling mode)")
			}
			if info.LastErrorDate != lastErr && info.LastErrorMessage != "" {
				lastErr = info.LastErrorDate
				r.logger.Warn("Telegram could not deliver to the webhook", "error", info.LastErrorMessage, "pending", info.PendingUpdates)
			}
		}
		if !telegram.Sleep(ctx, r.cfg.PollTimeout) {
			return nil
		}
	}
}
