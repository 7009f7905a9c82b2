// Package bot is mcpgram's Telegram front end: updates in, events out. It
// takes updates into the durable inbox (long polling, or Telegram's posts
// in webhook mode), hands them to package dispatch's lanes (a chat's, or a
// forum topic's), turns each message (text, a recording's transcript, a
// text file, images; an album's updates together) into a turn of the
// agent, and the agent's events into Telegram messages, cards with buttons
// and photos, in the topic the message came from. Here are the routing
// (route.go), forum topics (topic.go), the lifecycle (bot.go), who may do
// what (access.go), and the handlers of the commands' table (commands.go,
// see package commands). A turn's replies (reply), the cards that answer
// the agent (cards), the tasks' (taskcards) and the MCP Apps (apps) live
// in packages of their own, and so does each command's screen, which the
// bot hands what it checked of the user: settings (/system, /tools,
// /model, /topics), usage (/usage), servers (/servers), stats (/stats),
// connections (/connections); album gathers an album from the inbox. The
// pieces that know nothing of the agent live beside them: render (HTML),
// callback (button data), chats (the conversations' keys), media (what a
// message carries) and intake (what the model gets of it), statsview (the
// /stats text and chart), limits, updates and telegram (the Bot API
// client).
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/album"
	"github.com/mcpgram/mcpgram/bot/apps"
	"github.com/mcpgram/mcpgram/bot/cards"
	"github.com/mcpgram/mcpgram/bot/commands"
	"github.com/mcpgram/mcpgram/bot/connect"
	"github.com/mcpgram/mcpgram/bot/connections"
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/intake"
	"github.com/mcpgram/mcpgram/bot/limits"
	"github.com/mcpgram/mcpgram/bot/links"
	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/bot/menus"
	"github.com/mcpgram/mcpgram/bot/prompts"
	"github.com/mcpgram/mcpgram/bot/reply"
	"github.com/mcpgram/mcpgram/bot/retention"
	"github.com/mcpgram/mcpgram/bot/servers"
	"github.com/mcpgram/mcpgram/bot/settings"
	"github.com/mcpgram/mcpgram/bot/stats"
	"github.com/mcpgram/mcpgram/bot/taskcards"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/bot/updates"
	"github.com/mcpgram/mcpgram/bot/usage"
	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// An Agent runs the turns of the chats' messages, resets a chat's
// conversation (/new) and closes what expired; *agent.Agent is one. What
// else the bot's features need of it are its Parts.
type Agent interface {
	Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error
	Reset(ctx context.Context, chatID string) error
	Expire(ctx context.Context, now time.Time, emitFor func(chatID string) func(agent.Event)) error
}

// Parts are the agent's parts beside its turns, which the bot's features
// use: for *agent.Agent a, agent.NewForms(a), agent.NewPrompts(a) and so
// on.
type Parts struct {
	// Forms takes the answers to what a server asks mid-call (see
	// agent.Forms); *agent.Forms is one.
	Forms Forms
	// Prompts opens the prompts users choose (see agent.Prompts);
	// *agent.Prompts is one.
	Prompts prompts.Agent
	// SignIns opens an admin's card of the operator's sign-in to a
	// server, and a group's form in its user's private chat (see
	// agent.Connections); *agent.Connections is one.
	SignIns connect.Agent
	// Prefs keeps what each chat chose for itself (see agent.Prefs);
	// *agent.Prefs is one.
	Prefs settings.Agent
	// Usage reads the users' tokens (see agent.Meter); *agent.Meter is
	// one.
	Usage usage.Agent
	// TaskInput asks users what their tasks wait for (see
	// agent.Forms.Asking); *agent.Forms is one. nil: a task that waits
	// for input waits until it expires.
	TaskInput taskcards.Asker
}

// Forms are what a server asks mid-call (see agent.Forms): their inputs
// (package forms), and whether a call here waits for one of a user.
type Forms interface {
	forms.Agent
	Waiting(chatID, userID string) bool
}

// A Hub reports and manages the MCP servers; *hub.Hub is one. It is
// what the bot's features need of it: /servers (see servers.Hub), the
// sign-ins (see connect.Hub), the resource links a tool returned, read
// when their user opens them (see links.Hub), and the Stop of a task a
// server runs in the background and the questions it asks (see
// taskcards.Canceler and taskcards.Answerer).
type Hub interface {
	servers.Hub
	connect.Hub
	links.Hub
	taskcards.Canceler
	taskcards.Answerer
}

// A Store keeps the inbox of received updates (see store.Inbox), the
// statistics /stats reads and sweeps, the images users sent, which the
// bot sweeps past MediaRetention, the resource links of the buttons it
// shows, and how forums keep their topics. *sqlite.DB and *postgres.DB
// are Stores; see package store for what each call promises.
type Store interface {
	store.Inbox
	// The statistics /stats reads (see store.Statistics).
	stats.Store
	// The statistics and the images users sent, swept past their
	// retention (see store.Statistics and store.Images).
	retention.Store
	// The resource links tools returned, for their buttons (see
	// store.Links).
	store.Links
	// The calls whose MCP Apps users may open, and the approvals of what
	// the apps ask (see apps.Store).
	apps.Store
	// ChatsWithServersOff lists the chats with command menus of their
	// own (see store.ChatSettings).
	ChatsWithServersOff(ctx context.Context) ([]string, error)
	// ChatTopicsShared and SetChatTopicsShared keep whether a forum
	// keeps one conversation for all its topics (/topics; see
	// store.ChatSettings).
	ChatTopicsShared(ctx context.Context, chatID string) (bool, error)
	SetChatTopicsShared(ctx context.Context, chatID string, shared bool) error
	// The tasks: their cards, and the ends still to hand to their
	// conversations (see package taskcards).
	taskcards.Store
	taskcards.Undelivered
}

// DefaultAPIURL is Telegram's Bot API server.
const DefaultAPIURL = "https://api.telegram.org"

// DefaultStatsRetention is how long the records of turns and model calls
// are kept: /stats reads 7 days, the rest is a margin.
const DefaultStatsRetention = 30 * 24 * time.Hour

// Options are a Bot's optional settings. Zero durations and counts take
// the defaults given; tests shorten them.
type Options struct {
	// Tasks, when set, follows the calls servers run in the background
	// (see task.go): Run starts it, and closes it as it stops.
	Tasks TaskPoller
	// APIURL is the Bot API server (TELEGRAM_API_URL); default DefaultAPIURL.
	APIURL string
	// AllowedUserIDs may use the bot; empty allows anyone (a warning is logged).
	AllowedUserIDs []int64
	// AdminUserIDs may use /servers, /stats and "Always allow".
	AdminUserIDs []int64
	// AutoApproveAll (AUTO_APPROVE=all) opens a resource link at a press,
	// without the approval card its server's autoApprove would need.
	AutoApproveAll bool
	// RateLimitPerMinute caps messages per user; default 20.
	RateLimitPerMinute int
	// MaxConcurrentTurns caps turns running at once over all chats; default 64.
	MaxConcurrentTurns int
	// SendsPerSecond paces the messages the bot sends over all its chats
	// (TELEGRAM_SENDS_PER_SECOND), with a burst of as many; 0 does not
	// pace them.
	SendsPerSecond float64
	// Limits, when set, is where the per-user rate limit and the sending
	// pace are counted, so that they hold for every instance sharing it
	// (*postgres.DB is one); nil counts them in this process.
	Limits limits.Shared
	// Leases, when set, shares the inbox with other instances, each
	// running the chats it leases (*postgres.DB is one); nil runs every
	// chat here. See package dispatch.
	Leases dispatch.Claimer
	// ChatLease is how long a chat stays with this instance after it was
	// last renewed, with Leases; default dispatch.DefaultLease (3s).
	ChatLease time.Duration

	// Webhook selects webhook mode: updates arrive through WebhookHandler
	// instead of getUpdates. WebhookSecret, required then, is the token
	// Telegram must send in X-Telegram-Bot-Api-Secret-Token; WebhookURL,
	// when set, is registered with setWebhook at start.
	Webhook       bool
	WebhookSecret string
	WebhookURL    string

	// PollTimeout is the getUpdates long-poll timeout, in whole seconds;
	// default 30s. In webhook mode, how often getWebhookInfo is asked.
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
	// MenuInterval is how often the command menus are checked against the
	// servers' prompts, and set again when they changed; default 30s.
	MenuInterval time.Duration
	// ShutdownGrace is how long running turns may finish after Run's
	// context ends; default 20s.
	ShutdownGrace time.Duration
	// StatsRetention is how long the records /stats reads (turns, model
	// calls) are kept; older ones are swept hourly. Default
	// DefaultStatsRetention.
	StatsRetention time.Duration

	// Transcriber, when set, turns voice notes, audio and video notes into
	// text; without one, the bot says they are not set up.
	Transcriber media.Transcriber
	// MaxDocumentBytes caps the text files the bot reads; default 64 KiB.
	MaxDocumentBytes int
	// Vision says the model sees images: photos and images sent as files
	// go to it as images. Without it, only a photo's caption does.
	Vision bool
	// AlbumWait is how long the bot waits for more of an album's items
	// after the last one arrived; default 1s (see package album).
	AlbumWait time.Duration
	// MediaRetention is how long the images users sent are kept
	// (MEDIA_RETENTION); default 30 days.
	MediaRetention time.Duration
	// AppsURL is where MCP Apps' pages are served, PUBLIC_URL + "/apps/":
	// a tool with an app gets a button that opens it there. Empty: no
	// apps (see package apps).
	AppsURL string

	// Connections, when set, keeps the sign-ins to MCP servers that
	// /connections lists and disconnects (*oauth.Manager is one); nil:
	// /connections says there are none.
	Connections connections.Keeper

	// Metrics, when set, counts updates and Bot API calls, and reports the
	// inbox's backlog and the chats running and waiting.
	Metrics *metrics.Metrics

	Logger *slog.Logger
}

func (c *Options) setDefaults() {
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
	if c.MaxDocumentBytes <= 0 {
		c.MaxDocumentBytes = 64 << 10
	}
	if c.MaxRetries <= 0 {
		c.MaxRetries = 5
	}
	def(&c.ChatLease, dispatch.DefaultLease)
	def(&c.PollTimeout, 30*time.Second)
	def(&c.RetryMin, time.Second)
	def(&c.RetryMax, 30*time.Second)
	def(&c.TypingInterval, 4*time.Second)
	def(&c.StreamInterval, 1500*time.Millisecond)
	def(&c.ExpireInterval, 30*time.Second)
	def(&c.MenuInterval, 30*time.Second)
	def(&c.ShutdownGrace, 20*time.Second)
	def(&c.AlbumWait, album.DefaultWait)
	def(&c.MediaRetention, 30*24*time.Hour)
	def(&c.StatsRetention, DefaultStatsRetention)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// A Bot is the Telegram front end. Run it once; Close it after Run returns.
type Bot struct {
	cfg      Options
	agent    Agent
	parts    Parts
	hub      Hub
	store    Store
	logger   *slog.Logger
	tg       *telegram.Client
	self     tgbotapi.User
	queue    *dispatch.Queue
	in       *updates.Receiver
	intake   *intake.Reader
	albums   *album.Gatherer
	servers  *servers.Screen
	settings *settings.Screen
	stats    *stats.Screen
	usage    *usage.Screen
	conns    *connections.Screen
	tasks    *taskcards.Cards
	delivery *taskcards.Delivery
	inputs   *taskcards.Inputs // nil: tasks' questions are not asked

	allowed map[int64]bool
	admins  map[int64]bool
	ran     atomic.Bool
	users   *limits.Users // the per-user rate limit
	// stopping ends when Run's context does, as shutdown begins (set by
	// Run before it handles anything).
	stopping context.Context

	mu sync.Mutex
	// turns holds each lane's running turn, for /cancel, which runs out
	// of band. It is no lock: the dispatch lane of a chat (or of a forum's
	// topic) already runs its turns one at a time, so a lane has one
	// entry at most. (Expiry runs
	// beside the lanes; the agent serialises it with the chat's turns,
	// and it cannot be cancelled.)
	turns map[string]*turn // lane (a chat, or a topic) -> its running turn
	// beside holds, per chat (its lane), the done channel of the last
	// job routed beside its turn (see besideJob).
	beside map[string]chan struct{}
	// behind counts lane jobs waiting for a command routed before them
	// (tests read it).
	behind    atomic.Int64
	strangers limits.Refusals // when a stranger is told the bot is private

	cards   *cards.Deck        // the question and approval cards this instance sent
	forms   *forms.Cards       // the cards of forms this instance sent
	prompts *prompts.Prompts   // the prompts users choose, and their cards this instance sent
	signIns *connect.SignIns   // an admin's sign-ins, and what groups open in private chats
	links   *links.Links       // the resource links of the turns' results
	apps    *apps.Apps         // the MCP Apps of the turns' calls; nil: none
	replies *reply.Parts       // what the turns' replies are shown with
	menus   *menus.Menus       // the command menus, with the servers' prompts
	sweeper *retention.Sweeper // what is past its retention
}

// A turn is what /cancel and the Stop button need of a running turn.
type turn struct {
	id     string // the agent's turn id, which the Stop button names
	cancel context.CancelCauseFunc
	owner  int64 // the user whose turn it is
}

// New returns a Bot with token, the bot token from @BotFather
// (TELEGRAM_BOT_TOKEN), that has not yet contacted Telegram.
func New(token string, a Agent, p Parts, h Hub, s Store, cfg Options) (*Bot, error) {
	if token == "" {
		return nil, errors.New("bot: TELEGRAM_BOT_TOKEN is required")
	}
	if a == nil || h == nil || s == nil {
		return nil, errors.New("bot: agent, hub and store are required")
	}
	if p.Forms == nil || p.Prompts == nil || p.SignIns == nil || p.Prefs == nil || p.Usage == nil {
		return nil, errors.New("bot: every part of the agent is required")
	}
	if cfg.Webhook && cfg.WebhookSecret == "" {
		return nil, errors.New("bot: webhook mode needs TELEGRAM_WEBHOOK_SECRET")
	}
	cfg.setDefaults()
	b := &Bot{
		cfg: cfg, agent: a, parts: p, hub: h, store: s,
		logger:  cfg.Logger,
		allowed: map[int64]bool{},
		admins:  map[int64]bool{},
		turns:   map[string]*turn{},
		beside:  map[string]chan struct{}{},
	}
	b.users = limits.NewUsers(cfg.RateLimitPerMinute, cfg.Limits, cfg.Logger)
	for _, id := range cfg.AllowedUserIDs {
		b.allowed[id] = true
	}
	for _, id := range cfg.AdminUserIDs {
		b.admins[id] = true
	}
	// Every running turn may have two calls in flight ("typing" and its
	// replies), plus the poller and button presses handled out of band:
	// fewer idle connections than that and a busy bot dials Telegram (TCP
	// and TLS) for a good part of its calls.
	b.tg = telegram.New(token, cfg.APIURL, telegram.Options{
		PollTimeout: cfg.PollTimeout, MaxRetries: cfg.MaxRetries, RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax,
		MaxIdleConns: max(128, 2*cfg.MaxConcurrentTurns+16), Pace: limits.NewPacer(cfg.SendsPerSecond, cfg.Limits, cfg.Logger),
		Metrics: cfg.Metrics, Logger: cfg.Logger,
	})
	q, err := dispatch.New(s, b.route, dispatch.Options{Leases: cfg.Leases, MaxRunning: cfg.MaxConcurrentTurns, LeaseFor: cfg.ChatLease, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("bot: %w", err)
	}
	b.queue = q
	b.in = updates.New(b.tg, s, q.Arrived, updates.Options{
		Heartbeat: cfg.Heartbeat, Metrics: cfg.Metrics,
		PollTimeout: cfg.PollTimeout, RetryMin: cfg.RetryMin, RetryMax: cfg.RetryMax,
		Secret: cfg.WebhookSecret, URL: cfg.WebhookURL, Logger: cfg.Logger,
	})
	q.Register(cfg.Metrics)
	b.makeParts(token, p, h, s)
	return b, nil
}

// makeParts makes the bot's features: its screens, cards and readers,
// over the agent's parts p, hub h and store s.
func (b *Bot) makeParts(token string, p Parts, h Hub, s Store) {
	cfg := b.cfg
	b.servers = &servers.Screen{Hub: h, TG: b.tg, Logger: cfg.Logger, SignIn: b.signIn}
	b.forms = forms.New(p.Forms, b.tg, forms.Options{BotName: func() string { return b.self.UserName }, Logger: cfg.Logger})
	own := commandTable()
	b.prompts = prompts.New(p.Prompts, p.Forms, p.Prefs, h, b.tg, prompts.Options{
		Own: own.Names(), Run: b.runPrompt, BotID: func() int64 { return b.self.ID }, Logger: cfg.Logger,
	})
	b.signIns = connect.New(p.SignIns, h, b.forms, b.tg, connect.Options{IsAdmin: b.isAdmin, Logger: cfg.Logger})
	b.links = links.New(s, h, b.tg, links.Options{AutoApproveAll: cfg.AutoApproveAll, What: b.toolWhat, Logger: cfg.Logger})
	b.cards = &cards.Deck{TG: b.tg, Catalog: h.Catalog, IsAdmin: b.isAdmin, Logger: cfg.Logger}
	if cfg.AppsURL != "" {
		b.apps = apps.New(s, h.Catalog, b.tg, apps.Options{URL: cfg.AppsURL, Signer: apps.NewSigner(token), Logger: cfg.Logger,
			Chats: apps.Chats{Allowed: b.isAllowed, Admin: b.isAdmin, Allow: b.allowOne, Turn: b.queueTurn}})
	}
	b.tasks = &taskcards.Cards{TG: b.tg, Store: s, Hub: h, IsAdmin: b.isAdmin, Logger: cfg.Logger}
	if cfg.Tasks != nil { // never a nil poller in the interface
		b.tasks.Poller = cfg.Tasks
	}
	b.replies = &reply.Parts{TG: b.tg, Cards: b.cards, Forms: b.forms, Links: b.links, Apps: b.apps, What: b.toolWhat, Logger: cfg.Logger,
		TypingInterval: cfg.TypingInterval, StreamInterval: cfg.StreamInterval, Task: b.tasks.Show}
	b.cards.Replies = b.replies
	b.delivery = &taskcards.Delivery{Agent: b.agent, Replies: b.replies, Store: s, Logger: cfg.Logger}
	if p.TaskInput != nil {
		b.inputs = &taskcards.Inputs{Hub: h, Forms: p.TaskInput, Replies: b.replies, Logger: cfg.Logger}
	}
	b.menus = menus.New(menus.Lists{Everyone: own.MenuFor(commands.Everyone), ChatOwner: own.MenuFor(commands.ChatOwner), Operator: own.MenuFor(commands.Operator)},
		b.prompts, p.Prefs, s, b.tg, menus.Options{Admins: cfg.AdminUserIDs, Interval: cfg.MenuInterval, Logger: cfg.Logger})
	b.intake = &intake.Reader{TG: b.tg, BotName: func() string { return b.self.UserName }, Logger: cfg.Logger,
		Media: &media.Reader{Files: b.tg, Transcriber: cfg.Transcriber, MaxDocument: cfg.MaxDocumentBytes, Vision: cfg.Vision, Logger: cfg.Logger}}
	b.sweeper = &retention.Sweeper{Store: s, Links: b.links, Media: cfg.MediaRetention, Stats: cfg.StatsRetention, Logger: cfg.Logger}
	if b.apps != nil { // never a nil *apps.Apps in the interface
		b.sweeper.Apps = b.apps
	}
	b.albums = album.New(s, album.Options{Wait: cfg.AlbumWait, Logger: cfg.Logger})
	b.settings = settings.New(p.Prefs, h, b.tg, settings.Options{Topics: s, Logger: cfg.Logger})
	b.stats = stats.New(s, h, b.tg, stats.Options{Logger: cfg.Logger})
	b.usage = usage.New(p.Usage, b.tg, usage.Options{Logger: cfg.Logger})
	b.conns = &connections.Screen{Keeper: cfg.Connections, TG: b.tg, Logger: cfg.Logger}
}

// ErrCutShort is returned by Run when turns still running after the
// shutdown grace had to be cancelled. Their updates run again at the next
// start.
var ErrCutShort = errors.New("bot: running turns were cut short at shutdown")

// Run connects to Telegram, registers the commands and handles updates
// until ctx ends; then it stops polling, lets running turns finish for up
// to ShutdownGrace, and returns. Updates received but not handled stay in
// the inbox for the next Run. It returns ErrCutShort when turns had to be
// cancelled, and works once.
func (b *Bot) Run(ctx context.Context) error {
	if !b.ran.CompareAndSwap(false, true) {
		return errors.New("bot: Run called twice")
	}
	if err := b.connect(ctx); err != nil {
		return err
	}
	if len(b.allowed) == 0 {
		b.logger.Warn("ALLOWED_USER_IDS is empty: anyone on Telegram can use this bot and its tools")
	}
	menu := b.menus.Register(ctx)
	b.stopping = ctx

	if name := b.queue.Instance(); name != "" {
		b.logger.Info("sharing the inbox with other instances: this one runs the chats it leases", "instance", name, "lease", b.cfg.ChatLease)
	}
	b.queue.Start()
	// Expiry continues turns, so it gets the same grace as they do.
	b.queue.Go(func(work context.Context) { b.expireLoop(ctx, work) })
	b.queue.Go(func(work context.Context) { b.sweeper.MediaLoop(ctx) })
	b.queue.Go(func(work context.Context) { b.menus.Loop(ctx, menu) })
	if b.cfg.Tasks != nil {
		b.cfg.Tasks.Start()
		b.queue.Go(b.delivery.Pending)
	}
	var runErr error
	if b.cfg.Webhook {
		if runErr = b.in.Watch(ctx); runErr != nil {
			runErr = fmt.Errorf("bot: %w", runErr)
		}
	} else {
		b.in.Poll(ctx)
	}
	b.logger.Info("stopping: no more updates taken, waiting for running turns", "grace", b.cfg.ShutdownGrace)
	if b.cfg.Tasks != nil {
		// No task ends after this; those that ended are delivered now or
		// at the next start.
		_ = b.cfg.Tasks.Close()
	}

	grace, cancel := context.WithTimeout(context.Background(), b.cfg.ShutdownGrace)
	defer cancel()
	if err := b.queue.Close(grace); err != nil {
		b.logger.Warn("running turns did not finish in time; cancelled them, and their updates run again at the next start", "grace", b.cfg.ShutdownGrace)
		return errors.Join(runErr, ErrCutShort)
	}
	return runErr
}

// Close releases the Bot's connections and aborts Telegram calls in flight.
// Call it after Run has returned.
func (b *Bot) Close() { b.tg.Close() }

// connect calls getMe until it works or ctx ends: the bot needs its own
// username to recognise mentions in groups.
func (b *Bot) connect(ctx context.Context) error {
	delay := b.cfg.RetryMin
	for {
		me, err := b.tg.GetMe(ctx)
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
		if !telegram.Sleep(ctx, delay) {
			return fmt.Errorf("bot: connect to Telegram: %w", err)
		}
		delay = min(delay*2, b.cfg.RetryMax)
	}
}

// WebhookHandler returns the handler of Telegram's webhook requests, for
// the HTTP endpoint in webhook mode.
func (b *Bot) WebhookHandler() http.Handler { return b.in }

// Apps is the MCP Apps the bot shows, which the apps' pages ask to send
// approval cards, say messages and keep context in their chats (see
// apps.Host), or nil where it shows none.
func (b *Bot) Apps() *apps.Apps { return b.apps }
