// Package agent runs the loop behind one user message: it sends the system
// prompt, the conversation's history and the message to the model, acts on
// the tool calls written in the reply (through the executor and the hub),
// feeds the results back, and repeats until the model answers, asks the
// user something, or needs an approval. It reports progress as Events and
// knows nothing of Telegram, so the bot and the terminal chat drive the
// same code.
//
// Nothing waits in memory between turns: every message, follow-up question
// and approval request is in the store before the turn that made it ends,
// so a restart loses nothing and an answer or a button press days later
// picks up where the conversation stopped.
//
// # History
//
// The conversation is stored as messages with the roles RoleUser (what the
// user typed, or an <answer> to a question), RoleAssistant (the model's raw
// reply, tool XML included, so it sees what it did) and RoleTool (tool
// results and feedback, sent to the model as user messages, the way Cline
// does it for models without native tool calling). A stored turn starts at
// a RoleUser message; the context budget drops whole turns, oldest first.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/internal/keylock"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/store"
)

// Roles of stored messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool holds tool results and feedback; the model gets it as a
	// user message.
	RoleTool = "tool"
)

// Defaults of Options.
const (
	DefaultMaxTurns        = 20
	DefaultApprovalTimeout = 10 * time.Minute
	// MaxMistakes is how many replies in a row may hold invalid tool calls
	// before the turn stops.
	MaxMistakes = 3
)

// Errors a Turn returns for a button press that cannot be honoured; the
// turn then emitted nothing.
var (
	// ErrNotYours: the pending question or approval belongs to another
	// user or chat.
	ErrNotYours = errors.New("this request belongs to someone else")
	// ErrStale: the question or approval was already answered, superseded
	// by a newer one, reset, or has expired.
	ErrStale = errors.New("this request is no longer open")
)

// A Model answers chat messages as its profile says; *llm.Client is
// one. The profile's Name is the one a chat chooses it by (its Model
// labels metrics and stored token counts), and a turn reads everything
// model-specific from it, once, at its start:
//   - Temperature is sent on every call; after a reply with an invalid
//     tool call the next call is made 0.1 cooler per mistake in a row,
//     down to 0, to pull a confused model towards the format.
//   - ContextTokens is the budget for what one call sends, estimated at
//     4 bytes a token; 0 means none. Whole old turns are left out to fit;
//     the system prompt and the current turn never are.
//   - Vision: the images of the history go to the model, counted against
//     the budget; without it they are a note, and the user is told.
//   - Prompt is the system prompt's variant; ToolCalling, how tools are
//     called (see mcpgram.ToolCalling).
type Model interface {
	Profile() mcpgram.Profile
	// Complete makes one call. It must not keep req.Messages once it
	// returns: the agent builds the next call's messages in their place.
	Complete(ctx context.Context, req llm.Request) (*llm.Response, error)
}

// A Store is what the agent keeps: conversations, pending questions and
// approvals, the audit log, token usage, chats' settings, the images users
// sent, and how each turn ended (for /stats). *sqlite.DB and *postgres.DB
// are Stores; see package store for what each call promises.
type Store interface {
	store.Conversations
	store.Interactions
	store.Forms
	store.AuditLog
	store.TokenUsage
	store.ChatSettings
	// Tasks keeps the calls that became tasks (see EventTask).
	store.Tasks
	// MediaPut and MediaGet keep a turn's images with its message (see
	// store.Images), so that later turns, /retry and a restart still
	// show them to the model.
	MediaPut(ctx context.Context, mimeType string, data []byte) (string, error)
	MediaGet(ctx context.Context, ref string) (store.Media, error)
	// RecordTurn records how a turn that ended without a write of its
	// own ended (see store.Statistics).
	RecordTurn(ctx context.Context, r store.TurnRecord) error
}

// A Hub is where tools live; *hub.Hub is one.
type Hub interface {
	Catalog() mcpgram.Catalog
	CallTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error)
	ReadResource(ctx context.Context, caller mcpgram.Caller, server, uri string) (*mcpgram.Result, error)
	AllowTool(server, tool string) error
	WaitReady(ctx context.Context, server string) error
	// GetPrompt and Complete serve the prompts users choose.
	GetPrompt(ctx context.Context, caller mcpgram.Caller, server, name string, args map[string]string) (*mcpgram.PromptResult, error)
	Complete(ctx context.Context, caller mcpgram.Caller, server, prompt, arg, value string, known map[string]string) ([]string, error)
}

// Options are an Agent's optional settings; the zero value takes the
// defaults.
type Options struct {
	// DefaultProfile names the profile of a chat that chose none, or
	// chose one no longer configured (see SetChatProfile); default the
	// first model's.
	DefaultProfile string
	// SystemPrompt, when set, renders the system prompt from a catalog
	// for every profile, whatever its variant; nil renders it with
	// prompt.BuildVariant in the profile's variant. It is called once
	// per catalog Version and variant.
	SystemPrompt func(mcpgram.Catalog) string
	// NativePrompt renders the system prompt of a native call, which
	// teaches no call syntax, for every profile; default
	// prompt.BuildNative. It is not used for a call that searches for its
	// tools (see search.go); with SystemPrompt set, XML calls never
	// search.
	NativePrompt func(mcpgram.Catalog) string
	// PinnedTools are listed in full (offered as functions) when a model
	// searches for the others (PINNED_TOOLS).
	PinnedTools []mcpgram.ToolRef

	// StartWait bounds how long a turn waits, before its first model
	// call, for servers that are still starting (SERVER_START_WAIT): a
	// message that arrives as the bot starts is then answered with every
	// tool that comes up in time. 0 does not wait. The system prompt
	// names the servers still not available, so that the model can say
	// a request needs one of them.
	StartWait time.Duration

	// MaxTurns caps the model calls for one user message (MAX_TURNS);
	// default DefaultMaxTurns.
	MaxTurns int
	// AutoApproveAll runs every tool without asking (AUTO_APPROVE=all).
	AutoApproveAll bool
	// ApprovalTimeout is how long an approval request stays open; default
	// DefaultApprovalTimeout. Expire denies the ones past it. A form a
	// server asks for stays open as long, then the server gets cancel.
	ApprovalTimeout time.Duration
	// SignIns finishes the sign-ins of users who connect their own
	// accounts to servers (see Connect); nil: nobody can connect.
	SignIns SignIns
	// RedirectURI is where their browsers come back to: PUBLIC_URL +
	// mcpgram.CallbackPath, or (default) mcpgram.PasteBackRedirect, whose
	// address the user sends to the chat.
	RedirectURI string
	// FormPoll is how often a call waiting for a form looks in the store
	// for an answer given on another instance; default DefaultFormPoll.
	FormPoll time.Duration
	// Group reports whether a chat is a group, shared with others: there,
	// a sign-in and a form with fields to fill in are answered in the
	// user's own chat with the bot, never in the group (see
	// OpenPrivately). nil: no chat is.
	Group func(chatID string) bool
	// Chat names the chat a conversation is held in, whose servers
	// turned off (SetServerOff) it follows: a front end that keeps
	// conversations apart within a chat (a forum's topics) names them by
	// keys of its own, and the chat's switches are the chat's for all of
	// them. nil: each conversation is a chat.
	Chat func(conversation string) string
	// BackgroundAfter is how long a plain tool call (its server runs no
	// task) keeps its turn waiting (BACKGROUND_AFTER), the time it waits
	// for its user's answer to a form or sign-in not counted: past it the
	// call goes on in the background, kept in the store as a task whose
	// end is delivered as a task's is (EventTask, Request.Task), and
	// Keeper takes it over. 0, or no Keeper: a call keeps its turn
	// waiting to its end.
	BackgroundAfter time.Duration
	Keeper          Keeper
	// ProgressInterval is how often at most a turn reports its calls'
	// progress (EventToolProgress); default DefaultProgressInterval.
	ProgressInterval time.Duration
	// Executor options (output cap, parallelism).
	Executor executor.Options
	// HistoryCache is how many bytes of long conversations are kept in
	// memory between turns, so that a turn reads only what came since
	// its chat's last; default DefaultHistoryCache, negative none.
	HistoryCache int

	// TokenBudgetPerUserDay caps the tokens (read and written) one user's
	// turns may use per UTC day (TOKEN_BUDGET_PER_USER_DAY); 0 means no
	// cap. A typed message starts a turn only under it, so the last turn
	// of a day may go over; what carries a request on (a pressed or typed
	// answer to the user's question, an approval) is never refused.
	// Request.Exempt (admins) skips it.
	TokenBudgetPerUserDay int64
	// Metrics, when set, counts turns, model calls, tokens, the tool-call
	// format and tool calls. The Store records the same, metrics or not:
	// each turn's outcome and each model call (see store.Stats).
	Metrics *metrics.Metrics

	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// config is what New was given, the defaults filled in.
type config struct {
	Options
	Store Store
	Hub   Hub
	// choices are the models, in the order given.
	choices []choice
}

// An Agent runs turns. It is safe for concurrent use; turns of one chat
// run one at a time, turns of different chats in parallel.
type Agent struct {
	cfg    config
	exec   *executor.Executor
	logger *slog.Logger

	// prompts caches the system prompt per variant and mode.
	promptMu sync.Mutex
	prompts  map[promptKey]cachedPrompt
	// tools caches the native functions of the catalog: all of them
	// ([0]), and those of a call that searches for the others ([1]).
	tools [2]atomic.Pointer[toolset]
	// listings caches what listing every tool costs, per mode (native or
	// not), under promptMu.
	listings map[bool]listing
	// support remembers which endpoints took native tools (auto).
	support support

	// chats serialise the turns of one chat (see lock).
	chats keylock.Locks
	// kept is what long conversations' last turns read (nil: nothing is
	// kept).
	kept *keptHistories

	// waiting are the calls of this instance waiting for forms, by id.
	formMu  sync.Mutex
	waiting map[int64]*waiter
}

// A promptKey names a cached prompt: its variant, whether it is the
// native one (which has no variants), and whether it searches for tools.
type promptKey struct {
	variant mcpgram.PromptVariant
	native  bool
	search  bool
}

type cachedPrompt struct {
	version uint64
	text    string
}

// New returns an Agent that keeps its conversations in s, calls tools
// through h and answers with models: the profiles a chat may choose
// from (SetChatProfile), at least one.
func New(s Store, h Hub, models []Model, opts Options) (*Agent, error) {
	switch {
	case s == nil:
		return nil, errors.New("agent: no store")
	case h == nil:
		return nil, errors.New("agent: no hub")
	case opts.MaxTurns < 0:
		return nil, fmt.Errorf("agent: max turns %d is negative", opts.MaxTurns)
	case opts.TokenBudgetPerUserDay < 0:
		return nil, fmt.Errorf("agent: token budget %d is negative", opts.TokenBudgetPerUserDay)
	case opts.StartWait < 0:
		return nil, fmt.Errorf("agent: start wait %s is negative", opts.StartWait)
	case opts.BackgroundAfter < 0:
		return nil, fmt.Errorf("agent: background after %s is negative", opts.BackgroundAfter)
	}
	cfg := config{Options: opts, Store: s, Hub: h}
	var err error
	if cfg.choices, cfg.DefaultProfile, err = choices(models, opts.DefaultProfile); err != nil {
		return nil, err
	}
	if cfg.NativePrompt == nil {
		cfg.NativePrompt = prompt.BuildNative
	}
	if cfg.MaxTurns == 0 {
		cfg.MaxTurns = DefaultMaxTurns
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.FormPoll <= 0 {
		cfg.FormPoll = DefaultFormPoll
	}
	if cfg.RedirectURI == "" {
		cfg.RedirectURI = mcpgram.PasteBackRedirect
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = DefaultProgressInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Executor.Logger == nil {
		cfg.Executor.Logger = cfg.Logger
	}
	cfg.Executor.Logger = slog.New(turnHandler{cfg.Executor.Logger.Handler()})
	var kept *keptHistories
	switch {
	case cfg.HistoryCache == 0:
		kept = newKeptHistories(DefaultHistoryCache)
	case cfg.HistoryCache > 0:
		kept = newKeptHistories(cfg.HistoryCache)
	}
	return &Agent{
		cfg:      cfg,
		kept:     kept,
		exec:     executor.New(cfg.Hub, cfg.Executor),
		logger:   cfg.Logger,
		waiting:  make(map[int64]*waiter),
		prompts:  make(map[promptKey]cachedPrompt),
		listings: make(map[bool]listing),
	}, nil
}

// systemPrompt returns the prompt for cat in variant v, or the native one,
// rebuilt only when the catalog changed: the same bytes every call keep
// providers' prefix caches warm. A catalog a chat narrowed (own) is built
// each time, and not cached.
func (a *Agent) systemPrompt(cat mcpgram.Catalog, v mcpgram.PromptVariant, own, native, search bool) string {
	build := func() string {
		switch {
		case native && search:
			return prompt.BuildNativeWith(cat, prompt.Options{Search: a.pinned()})
		case native:
			return a.cfg.NativePrompt(cat)
		case a.cfg.SystemPrompt != nil:
			return a.cfg.SystemPrompt(cat)
		case search:
			return prompt.BuildWith(cat, prompt.Options{Variant: v, Search: a.pinned()})
		}
		return prompt.BuildVariant(cat, v)
	}
	if own {
		return build()
	}
	key := promptKey{variant: v, native: native, search: search}
	if native {
		key.variant = ""
	}
	a.promptMu.Lock()
	defer a.promptMu.Unlock()
	if p, ok := a.prompts[key]; ok && p.version == cat.Version {
		return p.text
	}
	p := cachedPrompt{version: cat.Version, text: build()}
	a.prompts[key] = p
	return p.text
}

// chatOf is the chat whose switches the conversation key follows (see
// Options.Chat).
func (a *Agent) chatOf(key string) string {
	if a.cfg.Chat == nil {
		return key
	}
	return a.cfg.Chat(key)
}

// chatInstructions is the part of the system prompt a chat's
// instructions make. It comes after the shared prompt, so that the shared
// prefix, the same bytes for every chat, still hits providers' caches.
func chatInstructions(s string) string {
	if s == "" {
		return ""
	}
	return "\n\n====\n\nINSTRUCTIONS FOR THIS CHAT\n\nThe people of this chat asked you to follow these instructions. Follow them where they do not conflict with the rules above (the tool-call format, approvals and consent stay as they are):\n\n" + s
}

// lock waits for the chat's running turn, if any, to end. A chat's lock
// is dropped when nobody holds or waits for it, so idle chats cost
// nothing.
//
// The bot's dispatch lanes already run a chat's updates one at a time, in
// order (and on one instance of several); the lock is still needed, and
// is the Agent's own promise, because not every turn comes through them:
// the terminal chat calls Turn directly, and Expire continues the turns
// of expired approvals beside the lanes. A lock does not keep order;
// the lanes do.
func (a *Agent) lock(ctx context.Context, chatID string) (unlock func(), err error) {
	return a.chats.Lock(ctx, chatID)
}

// Reset starts a new conversation for the chat (the old one stays on disk
// but is no longer sent to the model) and closes its open question or
// approval.
func (a *Agent) Reset(ctx context.Context, chatID string) error {
	unlock, err := a.lock(ctx, chatID)
	if err != nil {
		return err
	}
	defer unlock()
	if p, err := a.cfg.Store.OpenPending(ctx, chatID); err == nil {
		if err := a.cfg.Store.ResolvePending(ctx, p.ID, "reset", ""); err != nil && !errors.Is(err, store.ErrResolved) {
			return fmt.Errorf("reset chat %q: %w", chatID, err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("reset chat %q: %w", chatID, err)
	}
	if _, err := a.cfg.Store.ResetConversation(ctx, chatID); err != nil {
		return fmt.Errorf("reset chat %q: %w", chatID, err)
	}
	return nil
}
