// Package bot is mcpgram's Telegram front end: it polls for updates into a
// durable inbox, runs one ordered worker per chat, turns agent events into
// Telegram messages, buttons and photos, and lets admins manage the MCP
// servers with /servers.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"golang.org/x/time/rate"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
)

// An Agent runs turns; *agent.Agent is one.
type Agent interface {
	Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error
	Reset(ctx context.Context, chatID string) error
	Expire(ctx context.Context, now time.Time, emitFor func(chatID string) func(agent.Event)) error
}

// A Hub reports and manages the MCP servers; *hub.Hub is one.
type Hub interface {
	Catalog() hub.Catalog
	SetEnabled(ctx context.Context, server string, enabled bool) error
	Restart(ctx context.Context, server string) error
}

// A Store keeps the inbox of received updates; *store.DB is one.
type Store interface {
	InboxPut(ctx context.Context, items ...store.InboxItem) error
	InboxPendingAfter(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error)
	InboxDone(ctx context.Context, updateIDs ...int64) error
	InboxMaxUpdateID(ctx context.Context) (int64, error)
}

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// A Config configures a Bot. Zero durations and counts take the defaults
// given; tests shorten them.
type Config struct {
	// Token is the bot token from @BotFather (TELEGRAM_BOT_TOKEN). Required.
	Token string
	// APIURL is the Bot API server (TELEGRAM_API_URL); default DefaultAPIURL.
	APIURL string
	// AllowedUserIDs may use the bot; empty allows anyone (a warning is logged).
	AllowedUserIDs []int64
	// AdminUserIDs may use /servers and "Always allow".
	AdminUserIDs []int64
	// RateLimitPerMinute caps messages per user; default 20.
	RateLimitPerMinute int
	// MaxConcurrentTurns caps turns running at once over all chats; default 64.
	MaxConcurrentTurns int

	// PollTimeout is the getUpdates long-poll timeout, in whole seconds; default 30s.
	PollTimeout time.Duration
	// Heartbeat, when set, is called after each answer from getUpdates: a
	// health check reads from it that the bot is alive and reaches Telegram.
	Heartbeat func()
	// RetryMin and RetryMax bound the exponential backoff after network
	// errors, 5xx and 409; defaults 1s and 30s.
	RetryMin, RetryMax time.Duration
	// MaxRetries is how often one Telegram call is retried; default 5.
	MaxRetries int
	// TypingInterval re-sends "typing" while a turn runs; default 4s
	// (Telegram shows it for up to 5 s).
	TypingInterval time.Duration
	// StreamInterval is the least time between two edits of a streamed
	// draft; default 1.5s (Telegram allows about one message a second per chat).
	StreamInterval time.Duration
	// ExpireInterval is how often expired approvals are denied; default 30s.
	ExpireInterval time.Duration
	// ShutdownGrace is how long running turns may finish after Run's
	// context ends; default 20s.
	ShutdownGrace time.Duration

	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	if c.RateLimitPerMinute <= 0 {
		c.RateLimitPerMinute = 20
	}
	if c.MaxConcurrentTurns <= 0 {
		c.MaxConcurrentTurns = 64
	}
	if c.MaxRetries <= 0 {
		c.MaxRetries = 5
	}
	def(&c.PollTimeout, 30*time.Second)
	def(&c.RetryMin, time.Second)
	def(&c.RetryMax, 30*time.Second)
	def(&c.TypingInterval, 4*time.Second)
	def(&c.StreamInterval, 1500*time.Millisecond)
	def(&c.ExpireInterval, 30*time.Second)
	def(&c.ShutdownGrace, 20*time.Second)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

const (
	draftsUnknown int32 = iota
	draftsOn
	draftsOff
)

// A Bot is the Telegram front end. Run it once; Close it after Run returns.
type Bot struct {
	cfg    Config
	agent  Agent
	hub    Hub
	store  Store
	logger *slog.Logger

	api     *tgbotapi.BotAPI // sends; bound to baseCtx
	poll    *tgbotapi.BotAPI // long polls; bound to the poll context
	pollCtx *ctxBinder
	self    tgbotapi.User

	allowed map[int64]bool
	admins  map[int64]bool
	sem     chan struct{}

	// baseCtx outlives Run's context by ShutdownGrace so running turns can finish.
	baseCtx    context.Context
	baseCancel context.CancelFunc

	wake chan struct{} // the poller tells the dispatcher of new inbox items
	// dispatched is the highest update id handed to a worker; the
	// dispatcher reads on from there. Only dispatchLoop uses it.
	dispatched int64

	doneCh      chan int64    // handled update ids for doneLoop
	doneStopped chan struct{} // closed when doneLoop has drained doneCh

	mu           sync.Mutex
	chats        map[int64]*chat
	limiters     map[int64]*userLimit
	refused      map[int64]time.Time // stranger -> when last told the bot is private
	refusedSwept time.Time           // when refused was last cleared of old entries
	stopping     bool
	work         sync.WaitGroup // chat workers and out-of-band handlers

	// drafts says whether the server has sendMessageDraft: draftsUnknown
	// until the first try, then draftsOn or draftsOff.
	drafts atomic.Int32

	cards     sync.Map        // pending id -> *card: a question or approval with live buttons
	openCards map[int64]*card // chat -> its newest live card; under mu
}

type userLimit struct {
	lim    *rate.Limiter
	warned bool
}

// New returns a Bot that has not yet contacted Telegram.
func New(cfg Config, a Agent, h Hub, s Store) (*Bot, error) {
	if cfg.Token == "" {
		return nil, errors.New("bot: TELEGRAM_BOT_TOKEN is required")
	}
	if a == nil || h == nil || s == nil {
		return nil, errors.New("bot: agent, hub and store are required")
	}
	cfg.setDefaults()
	b := &Bot{
		cfg: cfg, agent: a, hub: h, store: s,
		logger:      cfg.Logger,
		allowed:     map[int64]bool{},
		admins:      map[int64]bool{},
		sem:         make(chan struct{}, cfg.MaxConcurrentTurns),
		wake:        make(chan struct{}, 1),
		doneCh:      make(chan int64, 1024),
		doneStopped: make(chan struct{}),
		chats:       map[int64]*chat{},
		limiters:    map[int64]*userLimit{},
		refused:     map[int64]time.Time{},
	}
	for _, id := range cfg.AllowedUserIDs {
		b.allowed[id] = true
	}
	for _, id := range cfg.AdminUserIDs {
		b.admins[id] = true
	}
	b.baseCtx, b.baseCancel = context.WithCancel(context.Background())
	// Every running turn may have two calls in flight ("typing" and its
	// replies), plus the poller and button presses handled out of band:
	// fewer idle connections than that and a busy bot dials Telegram (TCP
	// and TLS) for a good part of its calls.
	idle := max(128, 2*cfg.MaxConcurrentTurns+16)
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConns:        idle,
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
	}
	endpoint := cfg.APIURL + "/bot%s/%s"
	// The library builds requests without a context; binding one in the
	// client lets Close and shutdown abort a call in flight.
	sendClient := &ctxBinder{ctx: b.baseCtx, token: cfg.Token, client: &http.Client{Transport: transport, Timeout: 60 * time.Second}}
	b.pollCtx = &ctxBinder{ctx: b.baseCtx, token: cfg.Token, client: &http.Client{Transport: transport, Timeout: cfg.PollTimeout + 15*time.Second}}
	b.api = &tgbotapi.BotAPI{Token: cfg.Token, Client: sendClient, Buffer: 100}
	b.api.SetAPIEndpoint(endpoint)
	b.poll = &tgbotapi.BotAPI{Token: cfg.Token, Client: b.pollCtx, Buffer: 100}
	b.poll.SetAPIEndpoint(endpoint)
	return b, nil
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

// Run connects to Telegram, registers the commands and handles updates
// until ctx ends; then it stops polling, lets running turns finish for up
// to ShutdownGrace, and returns. Updates received but not handled stay in
// the inbox for the next Run.
func (b *Bot) Run(ctx context.Context) error {
	if err := b.connect(ctx); err != nil {
		return err
	}
	if len(b.allowed) == 0 {
		b.logger.Warn("ALLOWED_USER_IDS is empty: anyone on Telegram can use this bot and its tools")
	}
	b.registerCommands(ctx)

	go b.doneLoop()
	defer func() {
		close(b.doneCh)
		<-b.doneStopped
	}()

	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	b.pollCtx.set(pollCtx)

	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); b.pollLoop(pollCtx) }()
	go func() { defer loops.Done(); b.dispatchLoop(ctx) }()
	// Expiry continues turns, so it gets the same grace as they do.
	b.work.Add(1)
	go func() { defer b.work.Done(); b.expireLoop(ctx) }()
	<-ctx.Done()
	loops.Wait()
	b.logger.Info("stopping: polling stopped, waiting for running turns", "grace", b.cfg.ShutdownGrace)

	b.mu.Lock()
	b.stopping = true
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(b.cfg.ShutdownGrace):
		b.logger.Warn("running turns did not finish in time; cancelling them", "grace", b.cfg.ShutdownGrace)
		b.baseCancel()
		<-done
	}
	return nil
}

// Close releases the Bot's connections and cancels anything still running.
func (b *Bot) Close() error {
	b.baseCancel()
	if c, ok := b.api.Client.(*ctxBinder); ok {
		c.client.CloseIdleConnections()
	}
	return nil
}

// connect calls getMe until it works or ctx ends: the bot needs its own
// username to recognise mentions in groups.
func (b *Bot) connect(ctx context.Context) error {
	delay := b.cfg.RetryMin
	for {
		b.pollCtx.set(ctx)
		me, err := b.poll.GetMe()
		if err == nil {
			b.self = me
			b.logger.Info("connected to Telegram", "bot", me.UserName)
			return nil
		}
		var apiErr *tgbotapi.Error
		if errors.As(err, &apiErr) && apiErr.Code == http.StatusUnauthorized {
			return fmt.Errorf("bot: Telegram rejected TELEGRAM_BOT_TOKEN: %w", err)
		}
		b.logger.Warn("cannot reach Telegram; retrying", "err", err, "in", delay)
		if !sleep(ctx, delay) {
			return fmt.Errorf("bot: connect to Telegram: %w", err)
		}
		delay = min(delay*2, b.cfg.RetryMax)
	}
}

// commands is what setMyCommands registers for everyone; admins also get
// adminCommands in their private chat with the bot.
var (
	commands = []tgbotapi.BotCommand{
		{Command: "start", Description: "What this bot can do"},
		{Command: "help", Description: "How to use it"},
		{Command: "reset", Description: "Start a new conversation"},
		{Command: "tools", Description: "Connected servers and their tools"},
		{Command: "cancel", Description: "Stop the running request"},
	}
	adminCommands = append(append([]tgbotapi.BotCommand(nil), commands...),
		tgbotapi.BotCommand{Command: "servers", Description: "Manage the MCP servers"})
)

func (b *Bot) registerCommands(ctx context.Context) {
	if _, err := b.request(ctx, tgbotapi.NewSetMyCommands(commands...)); err != nil {
		b.logger.Warn("setMyCommands failed; the command menu may be stale", "err", err)
	}
	for id := range b.admins {
		// Fails with "chat not found" until the admin has talked to the
		// bot once; /servers works regardless.
		scope := tgbotapi.NewBotCommandScopeChat(id)
		if _, err := b.request(ctx, tgbotapi.NewSetMyCommandsWithScope(scope, adminCommands...)); err != nil {
			b.logger.Info("cannot set the admin command menu", "admin", id, "err", err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (b *Bot) isAdmin(id int64) bool { return b.admins[id] }

func (b *Bot) isAllowed(id int64) bool { return len(b.allowed) == 0 || b.allowed[id] || b.admins[id] }

// refusalInterval is the least time between two refusals to one stranger.
const refusalInterval = time.Minute

// refuse reports whether a user not allowed should be told so now: once
// per refusalInterval at most, then silence, so that strangers cannot
// spend the bot's Telegram budget (about one message a second per chat)
// by writing to it.
func (b *Bot) refuse(user int64) bool {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.refusedSwept) >= refusalInterval {
		// Entries old enough to refuse again are no longer needed; dropping
		// them keeps a stream of new strangers from growing the map.
		for id, at := range b.refused {
			if now.Sub(at) >= refusalInterval {
				delete(b.refused, id)
			}
		}
		b.refusedSwept = now
	}
	if at, ok := b.refused[user]; ok && now.Sub(at) < refusalInterval {
		return false
	}
	b.refused[user] = now
	return true
}

// allow applies the per-user rate limit; warn is true the first time a
// user is refused in a row, so the polite message is not itself a flood.
func (b *Bot) allow(user int64) (ok, warn bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.limiters[user]
	if l == nil {
		n := b.cfg.RateLimitPerMinute
		l = &userLimit{lim: rate.NewLimiter(rate.Every(time.Minute/time.Duration(n)), n)}
		b.limiters[user] = l
	}
	if l.lim.Allow() {
		l.warned = false
		return true, false
	}
	warn = !l.warned
	l.warned = true
	return false, warn
}
