package tgfake

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// A webhook is what setWebhook registered: the fake then posts updates to
// url, one at a time and in order (as with max_connections 1), and keeps
// an update until the bot answers 2xx, retrying with backoff as Telegram
// does.
type webhook struct {
	url    string
	secret string
	stop   context.CancelFunc
	done   chan struct{}
}

// secretToken is the syntax Telegram accepts for secret_token.
var secretToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// WebhookStatus is what getWebhookInfo would say, for tests.
type WebhookStatus struct {
	URL        string
	Deliveries int    // POSTs made, answered or not
	LastError  string // of the last failed delivery; "" after a success
}

// Webhook reports the webhook and its deliveries.
func (s *Server) Webhook() WebhookStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := WebhookStatus{Deliveries: s.deliveries, LastError: s.hookErr}
	if s.hook != nil {
		st.URL = s.hook.url
	}
	return st
}

// setWebhookLocked checks and registers a webhook and starts delivering.
func (s *Server) setWebhookLocked(p map[string]string) (any, *apiError) {
	u, err := url.Parse(p["url"])
	if p["url"] == "" {
		s.deleteWebhookLocked(p)
		return true, nil
	}
	// Telegram takes only HTTPS; the fake also takes plain HTTP to the
	// loopback, where tests listen.
	if err != nil || !(u.Scheme == "https" || (u.Scheme == "http" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost"))) {
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	if sec, ok := p["secret_token"]; ok && !secretToken.MatchString(sec) {
		return nil, badRequest("bad webhook: secret token contains unallowed characters")
	}
	s.deleteWebhookLocked(p)
	ctx, stop := context.WithCancel(context.Background())
	h := &webhook{url: p["url"], secret: p["secret_token"], stop: stop, done: make(chan struct{})}
	s.hook = h
	go s.deliver(ctx, h)
	return true, nil
}

// deleteWebhookLocked stops deliveries; drop_pending_updates forgets the
// updates not yet delivered.
func (s *Server) deleteWebhookLocked(p map[string]string) {
	if p["drop_pending_updates"] == "true" {
		s.updates, s.updateIDs = nil, nil
	}
	if h := s.hook; h != nil {
		s.hook = nil
		h.stop()
		// The delivery may be waiting for the lock this caller holds.
		s.mu.Unlock()
		<-h.done
		s.mu.Lock()
	}
}

// webhookInfoLocked answers getWebhookInfo.
func (s *Server) webhookInfoLocked() map[string]any {
	info := map[string]any{"url": "", "has_custom_certificate": false, "pending_update_count": len(s.updates)}
	if s.hook != nil {
		info["url"] = s.hook.url
		info["max_connections"] = 1
	}
	if s.hookErr != "" {
		info["last_error_date"] = s.hookErrAt.Unix()
		info["last_error_message"] = s.hookErr
	}
	return info
}

// deliver posts the queued updates to h until stopped.
func (s *Server) deliver(ctx context.Context, h *webhook) {
	defer close(h.done)
	client := &http.Client{Timeout: 10 * time.Second}
	backoff := time.Duration(0)
	for {
		s.mu.Lock()
		for len(s.updates) == 0 && ctx.Err() == nil {
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
			}
			s.mu.Lock()
		}
		if ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		body, id := s.updates[0], s.updateIDs[0]
		s.deliveries++
		s.mu.Unlock()

		errMsg := post(ctx, client, h, body)
		s.mu.Lock()
		if errMsg == "" {
			// Delivered: Telegram forgets it.
			if len(s.updateIDs) > 0 && s.updateIDs[0] == id {
				s.updates, s.updateIDs = s.updates[1:], s.updateIDs[1:]
			}
			s.hookErr, backoff = "", 0
		} else if ctx.Err() == nil {
			s.hookErr, s.hookErrAt = errMsg, time.Now()
			backoff = min(max(2*backoff, 10*time.Millisecond), time.Second)
		}
		s.notifyLocked()
		s.mu.Unlock()
		if backoff > 0 {
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
		}
	}
}

// post delivers one update and returns what went wrong, or "".
func post(ctx context.Context, client *http.Client, h *webhook, body []byte) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	if h.secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", h.secret)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "Connection refused"
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "Wrong response from the webhook: " + strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode)
	}
	return ""
}
