// Package store is mcpgram's state as the rest of the program sees it: the
// types it keeps (chats' conversations and messages, pending questions and
// approvals, the forms MCP servers ask users to fill in mid-call, the
// resource links tools returned, the calls whose MCP Apps users may open,
// the audit log of tool calls, the inbox
// of Telegram updates, token usage, the images users sent, chats' settings, the records of
// turns that /stats reads, the sign-ins to protected MCP servers, and the
// tasks tool calls became), the errors callers branch on, and the
// interfaces an engine implements, one per concern. [Store] is all of them.
//
// The package holds no engine, and importing it links no database driver.
// store/sqlite keeps everything in one SQLite file, the default;
// store/postgres keeps it in a PostgreSQL database that several instances
// of the bot share, and implements [Leases] and [Rates] besides.
// store/storetest is the suite of tests both engines pass, on the
// behaviour documented here; what only an engine can show (its
// durability, say) is in its own tests.
//
// What survives a crash, and why. Each call that writes does all of it or
// none, as one transaction: after a crash a turn's messages are never
// there without their audit rows and token counts (see [TurnWrite]). A
// write that returned survives a crash of the process. [Inbox.InboxPut] and
// [Inbox.InboxDone] survive a power cut as well, with every write that
// returned before them: the poller tells Telegram an update arrived as
// soon as InboxPut returns, after which the stored row is the only copy,
// and a mark of done lost to a power cut would have an update handled, and
// answered, twice. Other writes may lose their last commits to a power cut
// (the engines' docs say which do), but none that returned before an
// inbox write did: what a cut can lose is work that then runs again, the
// handling of updates not yet marked done, or an expiry.
//
// Lost connections. A database restarts and fails over as a matter of
// routine, and SQLite may stay locked by another process for a while. An
// engine retries a call whose connection was lost (or, SQLite, that found
// the database busy), on a fresh connection, with backoff, for up to ten
// seconds, wherever doing so cannot do a write twice: every read; every
// write that a second run leaves as the first did (storing an update
// again, marking one done again, setting a chat's settings again); every
// transaction that failed before its commit was sent, which the database
// rolled back; and a turn's write (AppendTurn), which the PostgreSQL
// engine names with a key stored in the same transaction, so that a retry
// after a commit whose answer was lost first finds out whether it went
// in. The writes that are neither (ResolvePending, RecordToolCall,
// RecordTurn) are retried only when they surely did not run. What still
// fails then wraps [ErrUnavailable]; the caller runs the work again later
// (the bot leaves the update in the inbox). Ping and the shared rates
// ([Rates]) are not retried: a health check must answer now, and the
// rates' callers count on their own while the database cannot be asked.
//
// Times are returned as UTC time.Time values, truncated to the millisecond.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Errors callers branch on.
var (
	// ErrNotFound is returned when the requested row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrResolved is returned by [Interactions.ResolvePending] when the
	// pending interaction was already resolved, e.g. a button pressed
	// twice, and by [Forms.SaveForm] for a form already resolved.
	ErrResolved = errors.New("already resolved")
	// ErrChanged is returned by [Forms.SaveForm] when another save came
	// first: read the form again, and apply the change to what it holds.
	ErrChanged = errors.New("changed since it was read")
	// ErrLeased is returned by [Tasks.ClaimTask] for a task another
	// instance's lease holds.
	ErrLeased = errors.New("leased to another instance")
	// ErrUnavailable is wrapped by the error of a call that could not
	// reach the database: its connection was lost (a restart, a failover)
	// or it stayed busy, through the engine's retries (see "Lost
	// connections" above). The database is not wrong, only away: the work
	// is to be done again once it is back, not failed for its user.
	ErrUnavailable = errors.New("the database is unavailable")
)

// A Store is everything mcpgram keeps, on one engine: *sqlite.DB and
// *postgres.DB are Stores. The program opens one and hands each part to
// the component that uses it.
type Store interface {
	Conversations
	Interactions
	Forms
	Links
	AppViews
	AuditLog
	Inbox
	TokenUsage
	Statistics
	Images
	ChatSettings
	OAuth
	Tasks

	// Ping reports whether the database answers a query.
	Ping(ctx context.Context) error
	// Close closes the store. Calls already running finish first; later
	// calls fail. Closing twice is harmless.
	Close() error
}

// Conversations keeps each chat's conversations and their messages. A
// chat has at most one active conversation at a time, whichever process
// starts or resets it.
type Conversations interface {
	// CurrentConversation returns the id of the chat's active
	// conversation, or ErrNotFound when it has none. It never writes: a
	// turn reads a new chat's (empty) history without a write, and
	// starts the conversation with its first AppendTurn.
	CurrentConversation(ctx context.Context, chatID string) (int64, error)
	// ChatState reads, as one read, what a turn needs of its chat before
	// it starts (see [ChatState]): key names the conversation (a chat, or
	// a forum topic's key; see [ChatSettings]), chat the chat it is in,
	// whose servers off it reads. It never writes.
	ChatState(ctx context.Context, key, chat string) (ChatState, error)
	// ResetConversation ends the chat's active conversation, if any, and
	// starts a new one whose id it returns. The old conversation stays
	// stored.
	ResetConversation(ctx context.Context, chatID string) (int64, error)
	// AppendTurn stores w in one transaction, all of it or none, and
	// returns the id of the conversation it appended to: the one w names,
	// or else the chat's active one, started if the chat has none (even
	// when w holds nothing else to store). One commit for the whole turn
	// instead of one per part.
	AppendTurn(ctx context.Context, w TurnWrite) (int64, error)
	// Messages returns a conversation's messages, oldest first, without
	// those a retry replaced (see TurnWrite.ReplaceFrom). An unknown
	// conversation has none.
	Messages(ctx context.Context, conversationID int64) ([]Message, error)
	// RecentMessages returns the newest of those messages, oldest first:
	// as far back from the newest as it takes for their contents to hold
	// at least bytes bytes (UTF-8, as stored), or all of them when they
	// hold fewer; none for bytes <= 0. It reads only those (an index
	// range, newest first), so a conversation's length does not change
	// its cost: what a model call can take is read, and the rest stays
	// stored.
	RecentMessages(ctx context.Context, conversationID int64, bytes int) ([]Message, error)
	// MessagesSince returns those messages from the one with id id on,
	// that one included, oldest first, at most limit of them (all when
	// limit <= 0), or none when that one is not among them (a retry
	// replaced it, or it is another conversation's): what was added
	// since a reader read up to id, and whether what it read still
	// stands. A retry replaces a conversation's messages from one on to
	// its end, so while the message id is there, every message before
	// it is too.
	MessagesSince(ctx context.Context, conversationID, id int64, limit int) ([]Message, error)
}

// ChatState is what a turn reads of its chat before it starts, read at
// once: six reads otherwise, and on PostgreSQL six round trips, before
// the model is asked anything. The flags say whether the reads they name
// would find anything, so that the turn makes them only then.
type ChatState struct {
	// Instructions, Profile and ServersOff are what ChatInstructions,
	// ChatProfile (of the key) and ChatServersOff (of the chat) return.
	Instructions string
	Profile      string
	ServersOff   []string
	// Conversation is the key's active conversation, 0 when it has none
	// (CurrentConversation's ErrNotFound).
	Conversation int64
	// PendingOpen says OpenPending finds an interaction of the key's.
	PendingOpen bool
	// FormsOpen says OpenForms returns some of the key's forms.
	FormsOpen bool
}

// Interactions keeps the follow-up questions and approvals that wait for a
// user (see [Pending]). A chat has at most one open at a time.
type Interactions interface {
	// CreatePending stores p as the chat's open interaction and returns
	// its id. An earlier open interaction of the chat is resolved as
	// ResolutionSuperseded in the same transaction; of two created at
	// once for one chat, from any processes, the later supersedes the
	// earlier. ID, ResolvedAt and Resolution are ignored; a zero
	// CreatedAt means now; a Kind other than KindQuestion and
	// KindApproval is an error.
	CreatePending(ctx context.Context, p Pending) (int64, error)
	// OpenPending returns the chat's open interaction, or ErrNotFound. An
	// open interaction past its ExpiresAt is still returned: expiry is
	// decided by the caller, through ExpiredPending.
	OpenPending(ctx context.Context, chatID string) (Pending, error)
	// GetPending returns the interaction with the given id, open or not,
	// or ErrNotFound.
	GetPending(ctx context.Context, id int64) (Pending, error)
	// ResolvePending closes an open interaction with the given resolution
	// (the caller's word, e.g. "answered", "approved", "denied",
	// "expired"). It is atomic: of two concurrent calls, for example a
	// button pressed twice, from any processes, one succeeds and the
	// other gets ErrResolved. An unknown id gives ErrNotFound. by names
	// the turn that resolves it ("" for none), kept as ResolvedBy.
	ResolvePending(ctx context.Context, id int64, resolution, by string) error
	// ExpiredPending returns the open interactions whose ExpiresAt is at
	// or before now, soonest expired first. It does not resolve them.
	ExpiredPending(ctx context.Context, now time.Time) ([]Pending, error)
}

// Forms keeps the questions MCP servers ask users in the middle of tool
// calls (see [Form]).
type Forms interface {
	// CreateForm stores f, open, and returns its id. ID, Version,
	// ResolvedAt and Resolution are ignored; a zero CreatedAt means now.
	CreateForm(ctx context.Context, f Form) (int64, error)
	// GetForm returns the form with the given id, open or not, or
	// ErrNotFound.
	GetForm(ctx context.Context, id int64) (Form, error)
	// SaveForm replaces the payload of the open form id if its version is
	// still version, and counts one more version; with a resolution, it
	// resolves the form in the same write. Of two saves of one version,
	// from any processes, one succeeds and the other gets ErrChanged. A
	// resolved form gives ErrResolved; an unknown id, ErrNotFound.
	SaveForm(ctx context.Context, id, version int64, payload, resolution string) error
	// OpenForms returns the chat's open forms, oldest first.
	OpenForms(ctx context.Context, chatID string) ([]Form, error)
}

// AuditLog records the tool calls the model made (see [ToolCall]); a
// turn's rows usually go with its messages, in [TurnWrite].
type AuditLog interface {
	// RecordToolCall appends c to the audit log. Its ID is ignored; a
	// zero CreatedAt means now.
	RecordToolCall(ctx context.Context, c ToolCall) error
	// RecentTools returns the tools that ran (ok or error) among the
	// chat's last calls audit rows, each once, the most recently used
	// first; resource reads are not tools. It reads only those rows.
	RecentTools(ctx context.Context, chatID string, calls int) ([]ToolRef, error)
}

// The Inbox keeps Telegram updates from their arrival until they are
// handled (see [InboxItem]): the poller and the webhook put them in, the
// dispatch queue reads the queued ones (those not yet done) in update id
// order, and marks each done once handled. Items are kept a while after
// that, until InboxPrune, but not their payloads: a message's text may
// hold what must not be kept (the address of a sign-in, with its code and
// state, pasted back), and a done item is never read again.
type Inbox interface {
	// InboxPut stores items in one transaction, skipping update ids
	// already in the inbox (done or not), so a batch Telegram sends again
	// is harmless. It returns once the commit would survive a power cut
	// (see the package doc).
	InboxPut(ctx context.Context, items ...InboxItem) error
	// InboxQueued returns up to limit queued items with an update id
	// above afterID, in update id order; limit <= 0 returns all. A reader that has handed out every item up to afterID pages on
	// with it, so a backlog of items still being handled does not hide
	// newer ones.
	InboxQueued(ctx context.Context, afterID int64, limit int) ([]InboxItem, error)
	// InboxQueuedChat returns up to limit queued items of one chat, in
	// update id order; limit <= 0 returns all. The bot gathers
	// an album's updates with it.
	InboxQueuedChat(ctx context.Context, chatID string, limit int) ([]InboxItem, error)
	// InboxDone marks updates as done, and empties their payloads, all in
	// one transaction, durable as InboxPut is. Marking one again is a
	// no-op. Unknown update ids give
	// an error wrapping ErrNotFound that names them (DescribeUpdates);
	// the known ones are marked all the same.
	InboxDone(ctx context.Context, updateIDs ...int64) error
	// InboxMaxUpdateID returns the highest update id ever stored, done or
	// not, or 0 for an empty inbox. The poller resumes from it plus one.
	InboxMaxUpdateID(ctx context.Context) (int64, error)
	// InboxBacklog returns how many items are queued, and when the
	// oldest of them was received (zero when none are).
	InboxBacklog(ctx context.Context) (int, time.Time, error)
	// InboxPrune deletes the items done and received before the given
	// time, and returns how many it deleted. The item with the highest
	// update id is always kept, so that InboxMaxUpdateID still knows
	// where to resume.
	InboxPrune(ctx context.Context, before time.Time) (int64, error)
}

// Leases share one Inbox among several instances of the bot by chat: a
// chat's items belong to the instance holding its lease, and nobody else
// runs them. An instance that stops renewing its leases (it died) loses
// them once they expire, and the next to take the chat takes every queued
// item of it, the one the old owner was running included. Renewing costs
// one write per instance, however many chats it holds. Only a store
// several processes share has them: *postgres.DB does.
type Leases interface {
	// ClaimQueued renews every lease of c.Instance, drops those of its
	// chats with nothing queued, takes up to c.NewChats chats more
	// (unleased ones with queued items, or ones whose lease expired), and
	// returns the queued items of every chat it then holds, in update id
	// order, above c.After, at most c.Limit (all when <= 0). All in one
	// transaction.
	ClaimQueued(ctx context.Context, c Claim) ([]InboxItem, error)
	// ReleaseLeases drops every lease of instance, as it stops: its
	// chats go to the other instances at once rather than after the
	// leases expire.
	ReleaseLeases(ctx context.Context, instance string) error
}

// Rates are rate limits that several instances of the bot count
// together, on the store's clock. Only a store several processes share
// has them: *postgres.DB does.
type Rates interface {
	// TakeRate counts one event of key against a limit of burst events,
	// one more every `every`: it returns 0 when the event fits (and
	// counts it), else how many events in a row the limit has refused,
	// this one included (a refused event is not counted against the
	// allowance).
	TakeRate(ctx context.Context, key string, every time.Duration, burst int) (int, error)
	// ReserveRate books one event of key at the rate of one every
	// `every`, with a burst of burst, and returns how long the caller
	// must wait before the event fits. The booking stands even if the
	// caller gives up waiting.
	ReserveRate(ctx context.Context, key string, every time.Duration, burst int) (time.Duration, error)
	// PruneRates deletes the keys that have been whole again since
	// before: they say nothing an absent key would not.
	PruneRates(ctx context.Context, before time.Time) (int64, error)
}

// TokenUsage counts the tokens users spend, by UTC day (see [Usage]); a
// turn adds its usage with its messages, in [TurnWrite].
type TokenUsage interface {
	// UserUsage returns the user's tokens on now's UTC day and in its
	// month.
	UserUsage(ctx context.Context, userID string, now time.Time) (UserUsage, error)
	// DayUsage returns the user's tokens on t's UTC day: what a daily
	// budget checks before each turn, cheaper than UserUsage.
	DayUsage(ctx context.Context, userID string, t time.Time) (Tokens, error)
}

// Statistics records how each turn ended, with its model calls, and reads
// them back over a window for /stats, beside the audit log and token
// usage. The records outlive the process (Prometheus counters do not)
// and, on a shared store, cover every instance.
type Statistics interface {
	// RecordTurn stores how a turn ended, with its model calls: one small
	// insert, for a turn that does not end on a write of its own (see
	// TurnWrite.Turn).
	RecordTurn(ctx context.Context, r TurnRecord) error
	// Stats computes the window [from, to), naming at most top users by
	// tokens (top <= 0: none).
	Stats(ctx context.Context, from, to time.Time, top int) (Stats, error)
	// Timeline counts the turns of [from, to) by outcome, in stretches of
	// step from from: one Bucket per stretch, empty ones included. A step
	// under a millisecond, or a to not after from, is an error.
	Timeline(ctx context.Context, from, to time.Time, step time.Duration) ([]Bucket, error)
	// PruneStats deletes the turns recorded before before, and returns
	// how many went. The audit log and token usage are kept: they are
	// records, not statistics.
	PruneStats(ctx context.Context, before time.Time) (int64, error)
}

// Images keeps the images users sent, by reference (see [Media]):
// messages name them by the hash of their bytes, stored once, so that
// later turns, /retry and a restart still show them to the model.
type Images interface {
	// MediaPut stores an image and returns its reference (MediaHash).
	// Storing the same bytes again stores nothing new but restarts their
	// retention.
	MediaPut(ctx context.Context, mimeType string, data []byte) (string, error)
	// MediaGet returns the image ref names, or an error wrapping
	// ErrNotFound when it is not kept (never stored, deleted by
	// MediaPrune, or not a reference at all).
	MediaGet(ctx context.Context, ref string) (Media, error)
	// MediaPrune deletes the images last stored before the given time,
	// and returns how many.
	MediaPrune(ctx context.Context, before time.Time) (int64, error)
}

// ChatSettings keeps what each chat chose for itself with /system, /tools,
// /model and /topics. A chat that chose nothing has the defaults: no
// instructions, no server off, the default model profile, a conversation
// per topic. A chat is named by a key the store does not interpret (the
// bot names a forum topic's conversation by its group and topic), and
// each key has settings of its own.
type ChatSettings interface {
	// ChatInstructions returns the instructions chatID set with /system,
	// or "" when it set none.
	ChatInstructions(ctx context.Context, chatID string) (string, error)
	// SetChatInstructions replaces chatID's instructions; "" clears them.
	SetChatInstructions(ctx context.Context, chatID, instructions string) error
	// ChatServersOff returns the servers chatID turned off for itself,
	// sorted, without duplicates.
	ChatServersOff(ctx context.Context, chatID string) ([]string, error)
	// SetChatServersOff replaces the servers chatID turned off for
	// itself.
	SetChatServersOff(ctx context.Context, chatID string, servers []string) error
	// ChatsWithServersOff returns the chats that have turned some server
	// off for themselves, sorted.
	ChatsWithServersOff(ctx context.Context) ([]string, error)
	// ChatProfile returns the model profile chatID chose with /model, or ""
	// when it chose none (the default).
	ChatProfile(ctx context.Context, chatID string) (string, error)
	// SetChatProfile records chatID's model profile; "" returns it to the
	// default.
	SetChatProfile(ctx context.Context, chatID, profile string) error
	// ChatTopicsShared reports whether chatID, a group with topics,
	// chose with /topics to keep one conversation for all its topics
	// rather than one per topic (the default).
	ChatTopicsShared(ctx context.Context, chatID string) (bool, error)
	// SetChatTopicsShared records that choice.
	SetChatTopicsShared(ctx context.Context, chatID string, shared bool) error
}

// DescribeUpdates names update ids for an error: "update 7", "updates
// [7 9]", or only their count when there are many. The engines' inbox
// errors and the dispatch queue's use it.
func DescribeUpdates(ids []int64) string {
	switch {
	case len(ids) == 1:
		return fmt.Sprintf("update %d", ids[0])
	case len(ids) <= 10:
		return fmt.Sprintf("updates %v", ids)
	}
	return fmt.Sprintf("%d updates", len(ids))
}
