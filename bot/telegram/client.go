// Package telegram is mcpgram's client of the Telegram Bot API, over
// go-telegram-bot-api: every call retried as Telegram asks (429 waits
// retry_after; 5xx and network errors back off), HTML that Telegram
// rejects sent again as plain text, long texts split, and the bot token
// kept out of every error, since the Bot API carries it in the URL.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/metrics"
)

// Options are a Client's optional settings.
type Options struct {
	// PollTimeout is the getUpdates long-poll timeout.
	PollTimeout time.Duration
	// MaxRetries is how often one call is retried.
	MaxRetries int
	// RetryMin and RetryMax bound the exponential backoff.
	RetryMin, RetryMax time.Duration
	// MaxIdleConns keeps that many connections to the server open.
	MaxIdleConns int
	// Pace, when set, spaces the messages sent (sendMessage, sendPhoto,
	// sendDocument), to keep within Telegram's limit for a bot as a whole.
	Pace Pacer
	// Metrics counts the calls by method and status; nil counts none.
	Metrics *metrics.Metrics
	// Logger, default one that discards.
	Logger *slog.Logger
}

// config is what New was given.
type config struct {
	Options
	Token  string
	APIURL string
}

// A Pacer spaces the messages a bot sends: Telegram allows a bot about 30
// a second over all its chats; *rate.Limiter is one.
type Pacer interface {
	Wait(ctx context.Context) error
}

// A Client calls the Bot API. Its methods are safe for concurrent use,
// except GetMe and GetUpdates, which one poller calls in turn.
type Client struct {
	cfg    config
	logger *slog.Logger
	api    *tgbotapi.BotAPI // sends; bound to base
	poll   *tgbotapi.BotAPI // long polls; bound to each poll's context
	sends  *ctxBinder
	polls  *ctxBinder
	base   context.Context
	cancel context.CancelFunc

	// drafts says whether the server has sendMessageDraft: draftsUnknown
	// until the first try, then draftsOn or draftsOff.
	drafts atomic.Int32
}

const (
	draftsUnknown int32 = iota
	draftsOn
	draftsOff
)

// New returns a Client of the bot with token at the Bot API server
// apiURL (without the trailing slash) that has not yet contacted
// Telegram.
func New(token, apiURL string, opts Options) *Client {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := config{Options: opts, Token: token, APIURL: apiURL}
	c := &Client{cfg: cfg, logger: cfg.Logger}
	c.base, c.cancel = context.WithCancel(context.Background())
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        cfg.MaxIdleConns,
		MaxIdleConnsPerHost: cfg.MaxIdleConns,
		IdleConnTimeout:     90 * time.Second,
	}
	endpoint := cfg.APIURL + "/bot%s/%s"
	// The library builds requests without a context; binding one in the
	// client lets Close abort a call in flight.
	c.sends = &ctxBinder{ctx: c.base, token: cfg.Token, client: &http.Client{Transport: transport, Timeout: 60 * time.Second}}
	c.polls = &ctxBinder{ctx: c.base, token: cfg.Token, client: &http.Client{Transport: transport, Timeout: cfg.PollTimeout + 15*time.Second}}
	c.api = &tgbotapi.BotAPI{Token: cfg.Token, Client: c.sends, Buffer: 100}
	c.api.SetAPIEndpoint(endpoint)
	c.poll = &tgbotapi.BotAPI{Token: cfg.Token, Client: c.polls, Buffer: 100}
	c.poll.SetAPIEndpoint(endpoint)
	return c
}

// Close aborts the calls in flight and closes idle connections.
func (c *Client) Close() {
	c.cancel()
	c.sends.client.CloseIdleConnections()
}

// GetMe asks who the bot is, once.
func (c *Client) GetMe(ctx context.Context) (tgbotapi.User, error) {
	c.polls.set(ctx)
	return c.poll.GetMe()
}

// GetUpdates long-polls one batch of updates, each as the raw JSON
// Telegram sent, so that fields this library version does not know
// survive. Cancelling ctx aborts the poll.
func (c *Client) GetUpdates(ctx context.Context, offset int64, allowed []string) ([]json.RawMessage, error) {
	c.polls.set(ctx)
	timeout := max(1, int(c.cfg.PollTimeout/time.Second)) // 0 would be a busy loop
	resp, err := c.poll.Request(tgbotapi.UpdateConfig{Offset: int(offset), Timeout: timeout, Limit: 100, AllowedUpdates: allowed})
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, fmt.Errorf("decode updates: %w", err)
	}
	return raws, nil
}

// Sleep waits d, or reports false when ctx ends first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ctxBinder attaches a context to every request of the library, and keeps
// the token out of its errors: the Bot API puts the token in the URL, and
// net/http quotes the URL in every transport error, which would end up in
// the log.
type ctxBinder struct {
	mu     sync.Mutex
	ctx    context.Context
	token  string
	client *http.Client
}

func (c *ctxBinder) set(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
}

func (c *ctxBinder) Do(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	ctx := c.ctx
	c.mu.Unlock()
	resp, err := c.client.Do(req.WithContext(ctx))
	if err != nil && c.token != "" {
		err = redact(err, c.token)
	}
	return resp, err
}

// redact hides token in err's text while keeping what callers test for
// with errors.Is and errors.As.
func redact(err error, token string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = strings.ReplaceAll(ue.URL, token, redacted)
	}
	if !strings.Contains(err.Error(), token) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), token, redacted), err: err}
}

const redacted = "<token>"

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// isNotModified reports Telegram's answer to an edit that changes nothing; it
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
func (c *Client) retryDelay(err error, attempt int) (time.Duration, bool) {
	backoff := min(c.cfg.RetryMin<<attempt, c.cfg.RetryMax)
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

// Request performs c with retries: 429 waits retry_after, 5xx and network
// errors back off, "message is not modified" counts as success. It suits
// the methods that return true (answerCallbackQuery, sendChatAction,
// deleteMessage), which Send cannot decode.
func (c *Client) Request(ctx context.Context, call tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	method := methodOf(call)
	if c.cfg.Pace != nil && paced(method) {
		if err := c.cfg.Pace.Wait(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	var resp *tgbotapi.APIResponse
	err := c.retry(ctx, method, func() error {
		var err error
		resp, err = c.api.Request(call)
		if isNotModified(err) {
			resp, err = &tgbotapi.APIResponse{Ok: true}, nil
		}
		return err
	})
	return resp, err
}

// retry calls do until it succeeds, fails for good, or runs out of tries.
func (c *Client) retry(ctx context.Context, method string, do func() error) error {
	for attempt := 0; ; attempt++ {
		err := do()
		c.count(method, err)
		if err == nil {
			return nil
		}
		delay, retry := c.retryDelay(err, attempt)
		if !retry || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			return err
		}
		c.logger.Debug("telegram call failed; retrying", "method", method, "err", err, "in", delay)
		if !Sleep(ctx, delay) {
			return err
		}
	}
}

// Send performs c and decodes the message Telegram returns.
func (c *Client) Send(ctx context.Context, call tgbotapi.Chattable) (tgbotapi.Message, error) {
	resp, err := c.Request(ctx, call)
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

// SendHTML sends one part of HTML to place to, falling back to plain
// text when Telegram rejects the markup, so nothing is ever silently
// dropped.
func (c *Client) SendHTML(ctx context.Context, to Place, replyTo int, html string, markup any) (tgbotapi.Message, error) {
	m, err := c.sendText(ctx, to, replyTo, html, tgbotapi.ModeHTML, markup)
	if err != nil && isParseError(err) {
		c.logger.Warn("Telegram rejected our HTML; sending plain text", "err", err)
		m, err = c.sendText(ctx, to, replyTo, render.PlainText(html), "", markup)
	}
	return m, err
}

// sendText sends text, in parse mode mode ("" for plain text).
func (c *Client) sendText(ctx context.Context, to Place, replyTo int, text, mode string, markup any) (tgbotapi.Message, error) {
	params, err := message(text, mode, replyTo, markup)
	if err != nil {
		return tgbotapi.Message{}, err
	}
	return c.post(ctx, "sendMessage", to, params)
}

// EditHTML edits a message to html, with the same plain-text fallback.
func (c *Client) EditHTML(ctx context.Context, chatID int64, msgID int, html string, markup *tgbotapi.InlineKeyboardMarkup) error {
	edit := tgbotapi.NewEditMessageText(chatID, msgID, html)
	edit.ParseMode = tgbotapi.ModeHTML
	edit.DisableWebPagePreview = true
	edit.ReplyMarkup = markup
	_, err := c.Request(ctx, edit)
	if err != nil && isParseError(err) {
		edit.Text, edit.ParseMode = render.PlainText(html), ""
		_, err = c.Request(ctx, edit)
	}
	return err
}

// SendLong splits html into parts and sends each to place to, the first
// as a reply to message replyTo (0: none), markup on the last one.
func (c *Client) SendLong(ctx context.Context, to Place, replyTo int, html string, markup any) (tgbotapi.Message, error) {
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
		m, err := c.SendHTML(ctx, to, rt, p, mk)
		var apiErr *tgbotapi.Error
		if err != nil && errors.As(err, &apiErr) && apiErr.Code == http.StatusBadRequest && !TopicGone(err) {
			// Telegram disagrees with our HTML or our count: send the
			// part as plain text in smaller pieces rather than drop it.
			c.logger.Warn("Telegram rejected a part; sending it as plain text", "err", err)
			for _, piece := range render.SplitPlain(render.PlainText(p), render.MaxMessageLen/2) {
				if m, err = c.sendText(ctx, to, 0, piece, "", mk); err != nil {
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

// RemoveKeyboard takes the buttons off a message.
func (c *Client) RemoveKeyboard(ctx context.Context, chatID int64, msgID int) {
	empty := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	edit := tgbotapi.NewEditMessageReplyMarkup(chatID, msgID, empty)
	if _, err := c.Request(ctx, edit); err != nil {
		c.logger.Debug("remove keyboard", "chat", chatID, "err", err)
	}
}

// AnswerCallback answers a button press so the button stops spinning.
func (c *Client) AnswerCallback(ctx context.Context, id, text string, alert bool) {
	cb := tgbotapi.NewCallback(id, text)
	cb.ShowAlert = alert
	if _, err := c.Request(ctx, cb); err != nil {
		c.logger.Debug("answerCallbackQuery", "err", err)
	}
}

// SendDraft shows html as the draft draftID of a private chat (or of one
// of its topics) with sendMessageDraft (Bot API 9.3+), once, and reports
// whether the server has that method: the first 404, or 400 before any
// success, turns it off for good, and the caller edits a message instead.
func (c *Client) SendDraft(to Place, draftID int64, html string) bool {
	if c.drafts.Load() == draftsOff {
		return false
	}
	params := to.params(tgbotapi.Params{
		"draft_id":   strconv.FormatInt(draftID, 10),
		"text":       html,
		"parse_mode": tgbotapi.ModeHTML,
	})
	_, err := c.api.MakeRequest("sendMessageDraft", params)
	if err == nil {
		c.drafts.CompareAndSwap(draftsUnknown, draftsOn)
		return true
	}
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && (apiErr.Code == http.StatusNotFound ||
		(apiErr.Code == http.StatusBadRequest && c.drafts.Load() == draftsUnknown && !TopicGone(err))) {
		if c.drafts.CompareAndSwap(draftsUnknown, draftsOff) {
			c.logger.Info("the Bot API server lacks sendMessageDraft; streaming by editing a message", "err", err)
		}
		return false
	}
	// A lost frame only delays the preview; the final message follows.
	c.logger.Debug("sendMessageDraft", "err", err)
	return true
}

// Typing shows "typing…" in place to, once, without retries: a missed
// one is not worth a delay.
func (c *Client) Typing(to Place) error {
	_, err := c.api.MakeRequest("sendChatAction", to.params(tgbotapi.Params{"action": tgbotapi.ChatTyping}))
	c.count("sendChatAction", err)
	return err
}

// count records a call's method and status.
func (c *Client) count(method string, err error) {
	if c.cfg.Metrics == nil {
		return
	}
	status := "ok"
	var apiErr *tgbotapi.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.Code != 0:
		status = strconv.Itoa(apiErr.Code)
	case errors.As(err, &apiErr):
		status = "error"
	case err != nil:
		status = "network"
	}
	c.cfg.Metrics.TelegramRequest(method, status, apiErr != nil && apiErr.RetryAfter > 0)
}

// paced reports whether method sends a new message, which Telegram counts
// against a bot's limit; edits, chat actions and answers to presses are
// not paced.
func paced(method string) bool {
	switch method {
	case "sendMessage", "sendPhoto", "sendDocument":
		return true
	}
	return false
}

// methodOf names the Bot API method of a call; the library keeps its own
// name for it unexported.
func methodOf(call tgbotapi.Chattable) string {
	switch call.(type) {
	case tgbotapi.MessageConfig:
		return "sendMessage"
	case tgbotapi.EditMessageTextConfig:
		return "editMessageText"
	case tgbotapi.EditMessageReplyMarkupConfig:
		return "editMessageReplyMarkup"
	case tgbotapi.DeleteMessageConfig:
		return "deleteMessage"
	case tgbotapi.CallbackConfig:
		return "answerCallbackQuery"
	case tgbotapi.ChatActionConfig:
		return "sendChatAction"
	case tgbotapi.PhotoConfig:
		return "sendPhoto"
	case tgbotapi.DocumentConfig:
		return "sendDocument"
	case tgbotapi.SetMyCommandsConfig:
		return "setMyCommands"
	}
	return "other"
}

// ErrTooBig is returned by Download for a file over the limit.
var ErrTooBig = errors.New("telegram: file too big")

// ChatMember asks what user is in chat (creator, administrator, member…).
func (c *Client) ChatMember(ctx context.Context, chatID, user int64) (tgbotapi.ChatMember, error) {
	var m tgbotapi.ChatMember
	err := c.retry(ctx, "getChatMember", func() error {
		var err error
		m, err = c.api.GetChatMember(tgbotapi.GetChatMemberConfig{ChatConfigWithUser: tgbotapi.ChatConfigWithUser{ChatID: chatID, UserID: user}})
		return err
	})
	return m, err
}
