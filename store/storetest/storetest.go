// Package storetest is the behaviour every store engine shares, as one
// suite of tests against the interfaces of package store: store/sqlite and
// store/postgres each run it from their own tests, so the agent and the
// bot can take either without telling them apart.
//
// It covers conversations and messages, turns, pending interactions,
// forms, resource links, tasks, the audit log, the inbox, token usage, the images users sent, chats'
// settings, the statistics of /stats and the sign-ins to MCP servers, their errors, their use from
// several handles at once (as several processes would), and cancelled
// contexts. What only one engine has (SQLite's pragmas, write gate, media
// files and crash test; PostgreSQL's advisory-locked migrations, leases
// and shared rates) stays in that engine's tests.
package storetest

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram/store"
)

// A Store is what the suite runs against: the contract ([store.Store]),
// and three reads that no part of mcpgram makes, so the contract leaves
// them out, but that both engines have as methods of their own, to check
// what was written: the audit log, newest first (limit <= 0: all of it),
// the schema version, and the tables where some row holds a text.
type Store interface {
	store.Store
	ToolCalls(ctx context.Context, limit int) ([]store.ToolCall, error)
	SchemaVersion(ctx context.Context) (int, error)
	Holding(ctx context.Context, text string) ([]string, error)
}

// Open returns a new handle on the test's database: empty on the test's
// first call, the same database on later calls of the same test (a
// reopen, or a second process). Handles are closed when the test ends;
// the suite may close one sooner.
type Open func(t testing.TB) Store

// Run runs the suite, each test as a subtest on a database of its own,
// in parallel.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		run  func(t *testing.T, open Open)
	}{
		{"SchemaVersion", testSchemaVersion},
		{"CloseTwice", testCloseTwice},
		{"ConversationsAndReset", testConversationsAndReset},
		{"ChatState", testChatState},
		{"ConversationEmptyChatID", testConversationEmptyChatID},
		{"MessagesOrderAndTokens", testMessagesOrderAndTokens},
		{"MessagesText", testMessagesText},
		{"AppendTurn", testAppendTurn},
		{"ToolCalls", testToolCalls},
		{"PendingLifecycle", testPendingLifecycle},
		{"PendingChatsAreIndependent", testPendingChatsAreIndependent},
		{"PendingBadKind", testPendingBadKind},
		{"ResolvePendingDoublePress", testResolvePendingDoublePress},
		{"ExpiredPending", testExpiredPending},
		{"FormLifecycle", testFormLifecycle},
		{"ConcurrentSaveForm", testConcurrentSaveForm},
		{"Links", testLinks},
		{"Tasks", testTasks},
		{"TaskFinish", testTaskFinish},
		{"TaskStats", testTaskStats},
		{"TaskDelivery", testTaskDelivery},
		{"TaskLeases", testTaskLeases},
		{"TaskClaimRace", testTaskClaimRace},
		{"AppViews", testAppViews},
		{"AppContexts", testAppContexts},
		{"Inbox", testInbox},
		{"InboxEmptyPayloadAndChat", testInboxEmptyPayloadAndChat},
		{"UsageTodayAndMonth", testUsageTodayAndMonth},
		{"Stats", testStats},
		{"StatsEmptyAndPrune", testStatsEmptyAndPrune},
		{"Timeline", testTimeline},
		{"ChatInstructions", testChatInstructions},
		{"ChatServersOff", testChatServersOff},
		{"ChatProfile", testChatProfile},
		{"ChatTopicsShared", testChatTopicsShared},
		{"TopicKeys", testTopicKeys},
		{"ReplaceMessages", testReplaceMessages},
		{"RecentMessages", testRecentMessages},
		{"RecentMessagesLongConversation", testRecentMessagesLongConversation},
		{"MessagesSince", testMessagesSince},
		{"RecentTools", testRecentTools},
		{"StatsSearches", testStatsSearches},
		{"MessagesOnlyFor", testMessagesOnlyFor},
		{"InboxQueued", testInboxQueued},
		{"InboxPrune", testInboxPrune},
		{"InboxDoneMany", testInboxDoneMany},
		{"InboxBacklog", testInboxBacklog},
		{"InboxQueuedChat", testInboxQueuedChat},
		{"Media", testMedia},
		{"InboxPutConcurrentDuplicates", testInboxPutConcurrentDuplicates},
		{"ConcurrentWriters", testConcurrentWriters},
		{"ConcurrentActiveConversation", testConcurrentActiveConversation},
		{"ConcurrentResets", testConcurrentResets},
		{"ConcurrentCreatePending", testConcurrentCreatePending},
		{"ContextCancelled", testContextCancelled},
		{"OAuthGrant", testOAuthGrant},
		{"OAuthConcurrentClaim", testOAuthConcurrentClaim},
		{"OAuthList", testOAuthList},
		{"OAuthTake", testOAuthTake},
		{"OAuthClient", testOAuthClient},
		{"OAuthFlow", testOAuthFlow},
		{"NothingKeptOfASignIn", testNothingKeptOfASignIn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a database of its own
			tt.run(t, open)
		})
	}
}

// PerTest makes an Open for an engine: create makes the test's empty
// database, once per test, and returns what connect opens it with (a
// file path, a URL).
func PerTest[S Store](create func(t testing.TB) string, connect func(ctx context.Context, where string) (S, error)) Open {
	var mu sync.Mutex
	where := map[testing.TB]string{}
	return func(t testing.TB) Store {
		t.Helper()
		mu.Lock()
		w, ok := where[t]
		if !ok {
			w = create(t)
			where[t] = w
			t.Cleanup(func() {
				mu.Lock()
				delete(where, t)
				mu.Unlock()
			})
		}
		mu.Unlock()
		s, err := connect(t.Context(), w)
		if err != nil {
			t.Fatalf("open the store: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	}
}

// The suite's shorthands, made of the contract's calls; the exported
// ones serve the engines' own tests too.

// active returns the chat's active conversation, starting one: a turn
// with nothing to store does.
func active(ctx context.Context, db Store, chatID string) (int64, error) {
	return db.AppendTurn(ctx, store.TurnWrite{ChatID: chatID})
}

// Active is active for a test's set-up: it fails t if the store cannot.
func Active(t testing.TB, db Store, chatID string) int64 {
	t.Helper()
	conv, err := active(t.Context(), db, chatID)
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

// AppendMessages adds msgs to a conversation, as a turn does.
func AppendMessages(ctx context.Context, db Store, conv int64, msgs ...store.Message) error {
	_, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, Messages: msgs})
	return err
}

// queued returns up to limit items not yet done, from the first; limit
// <= 0 returns all.
func queued(ctx context.Context, db Store, limit int) ([]store.InboxItem, error) {
	return db.InboxQueued(ctx, math.MinInt64, limit)
}

// reopen closes db and opens the test's database again.
func reopen(t *testing.T, db Store, open Open) Store {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return open(t)
}

func testSchemaVersion(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("SchemaVersion of a new database = %d, want >= 1", v)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	conv := Active(t, db, "chat")
	if err := AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "hello"}); err != nil {
		t.Fatal(err)
	}

	db = reopen(t, db, open)
	if v2, err := db.SchemaVersion(ctx); err != nil || v2 != v {
		t.Errorf("SchemaVersion after reopen = %d, %v; want %d", v2, err, v)
	}
	if got, err := active(ctx, db, "chat"); err != nil || got != conv {
		t.Errorf("active conversation after reopen = %d, %v; want %d", got, err, conv)
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "hello" {
		t.Errorf("Messages after reopen = %+v, want one \"hello\"", msgs)
	}
}

func testCloseTwice(t *testing.T, open Open) {
	db := open(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := db.CurrentConversation(t.Context(), "c"); err == nil {
		t.Error("CurrentConversation after Close: got nil error, want one")
	}
}
