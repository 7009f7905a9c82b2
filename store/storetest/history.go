package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// testRecentMessages: RecentMessages reads the newest messages that hold
// the bytes asked for, oldest first, the same as the end of Messages;
// replaced messages count for nothing, before and after new ones.
func testRecentMessages(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	// Ten messages of 10 bytes, then one of a 2-byte character, one
	// empty, one of 10.
	var msgs []store.Message
	for i := range 10 {
		msgs = append(msgs, store.Message{Role: "user", Content: fmt.Sprintf("message %02d", i)})
	}
	msgs = append(msgs, store.Message{Role: "assistant", Content: "é"}, store.Message{Role: "tool", Content: ""}, store.Message{Role: "user", Content: "message 12"})
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: msgs[:4]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, Messages: msgs[4:]}); err != nil {
		t.Fatal(err)
	}
	all, err := db.Messages(ctx, conv)
	if err != nil || len(all) != 13 {
		t.Fatalf("Messages = %d, %v", len(all), err)
	}
	contents := func(ms []store.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Content)
		}
		return out
	}
	for _, tt := range []struct {
		bytes, want int // want: how many of the newest messages
	}{
		{0, 0}, {-5, 0}, {1, 1}, {10, 1}, {11, 3}, {12, 3}, {13, 4}, {22, 4}, {23, 5}, {102, 12}, {103, 13}, {1 << 30, 13},
	} {
		got, err := db.RecentMessages(ctx, conv, tt.bytes)
		if err != nil {
			t.Fatal(err)
		}
		if want := all[len(all)-tt.want:]; !slices.EqualFunc(got, want, sameMessage) {
			t.Errorf("RecentMessages(%d bytes) = %q, want %q", tt.bytes, contents(got), contents(want))
		}
	}
	// A retry replaces the last two; the new ones count after the ones
	// kept, as if the replaced were never there.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, ReplaceFrom: all[11].ID,
		Messages: []store.Message{{Role: "user", Content: "message 13"}, {Role: "assistant", Content: "message 14"}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.RecentMessages(ctx, conv, 21); err != nil || !slices.Equal(contents(got), []string{"é", "message 13", "message 14"}) {
		t.Errorf("after a replace: %q, %v; want é and the two new", contents(got), err)
	}
	if got, err := db.RecentMessages(ctx, 424242, 100); err != nil || len(got) != 0 {
		t.Errorf("unknown conversation: %v, %v", got, err)
	}
}

// testMessagesSince: MessagesSince reads from a message on, that one
// included, oldest first, up to a limit; from a replaced message, or
// another conversation's, it reads nothing.
func testMessagesSince(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	var msgs []store.Message
	for i := range 6 {
		msgs = append(msgs, store.Message{Role: "user", Content: fmt.Sprintf("message %d", i)})
	}
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: msgs[:3]})
	if err != nil {
		t.Fatal(err)
	}
	// Another conversation's messages come between: ids are the store's,
	// not the conversation's.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "other", Messages: msgs[:2]}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, Messages: msgs[3:]}); err != nil {
		t.Fatal(err)
	}
	all, err := db.Messages(ctx, conv)
	if err != nil || len(all) != 6 {
		t.Fatalf("Messages = %d, %v", len(all), err)
	}
	for _, tt := range []struct {
		from, limit int // from: an index of all
		want        []store.Message
	}{
		{0, 0, all}, {2, 0, all[2:]}, {2, 2, all[2:4]}, {5, 0, all[5:]}, {5, 1, all[5:]}, {0, -1, all},
	} {
		got, err := db.MessagesSince(ctx, conv, all[tt.from].ID, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, tt.want, sameMessage) {
			t.Errorf("MessagesSince(message %d, limit %d) = %d messages, want %d", tt.from, tt.limit, len(got), len(tt.want))
		}
	}
	// A retry replaces the last three: read from the first of them,
	// nothing; read from before it, all that stands.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, ReplaceFrom: all[3].ID,
		Messages: []store.Message{{Role: "user", Content: "again"}}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.MessagesSince(ctx, conv, all[3].ID, 0)
	if err != nil || len(got) != 0 {
		t.Errorf("from a replaced message: %d messages (%v), want none", len(got), err)
	}
	got, err = db.MessagesSince(ctx, conv, all[2].ID, 0)
	if err != nil || len(got) != 2 || got[0].ID != all[2].ID || got[1].Content != "again" {
		t.Errorf("from the last kept: %d messages (%v), want it and the new one", len(got), err)
	}
	if got, err := db.MessagesSince(ctx, 424242, all[0].ID, 0); err != nil || len(got) != 0 {
		t.Errorf("another conversation's message: %v, %v", got, err)
	}
}

func sameMessage(a, b store.Message) bool {
	return a.ID == b.ID && a.Role == b.Role && a.Content == b.Content && a.CreatedAt.Equal(b.CreatedAt) &&
		a.PromptTokens == b.PromptTokens && slices.Equal(a.Media, b.Media)
}

// testRecentMessagesLongConversation: a conversation of thousands of
// messages, written in batches, reads back its newest by bytes, each
// message exactly once and in order, whatever the cut.
func testRecentMessagesLongConversation(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	const n = 3000
	conv := int64(0)
	for start := 0; start < n; start += 500 {
		var batch []store.Message
		for i := start; i < start+500; i++ {
			batch = append(batch, store.Message{Role: "user", Content: fmt.Sprintf("%05d%s", i, strings.Repeat("x", i%7))})
		}
		var err error
		if conv, err = db.AppendTurn(ctx, store.TurnWrite{ChatID: "long", ConversationID: conv, Messages: batch}); err != nil {
			t.Fatal(err)
		}
	}
	for _, bytes := range []int{1, 4000, 20000, 1 << 20} {
		got, err := db.RecentMessages(ctx, conv, bytes)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for i, m := range got {
			if want := fmt.Sprintf("%05d", n-len(got)+i); !strings.HasPrefix(m.Content, want) {
				t.Fatalf("%d bytes: message %d is %q, want %s…", bytes, i, m.Content, want)
			}
			sum += len(m.Content)
		}
		if sum < bytes && len(got) != n || sum-len(got[0].Content) >= bytes {
			t.Errorf("%d bytes: read %d in %d messages, want the fewest that hold them (or all)", bytes, sum, len(got))
		}
	}
}

// testRecentTools: the tools that ran among the chat's last rows, once
// each, newest first; denied calls, resource reads and other chats' rows
// are not.
func testRecentTools(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	at := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	for i, c := range []store.ToolCall{
		{ChatID: "c", Server: "s", Tool: "old", Status: "ok"},
		{ChatID: "c", Server: "s", Tool: "a", Status: "ok"},
		{ChatID: "other", Server: "s", Tool: "theirs", Status: "ok"},
		{ChatID: "c", Server: "s", Tool: "denied", Status: "denied"},
		{ChatID: "c", Server: "s", Tool: "access_mcp_resource", Status: "ok"},
		{ChatID: "c", Server: "t", Tool: "b", Status: "error"},
		{ChatID: "c", Server: "s", Tool: "a", Status: "ok"},
	} {
		c.UserID, c.Arguments, c.CreatedAt = "u", "{}", at.Add(time.Duration(i)*time.Second)
		if err := db.RecordToolCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.RecentTools(ctx, "c", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.ToolRef{{Server: "s", Tool: "a"}, {Server: "t", Tool: "b"}}; !slices.Equal(got, want) {
		t.Errorf("RecentTools(5 rows) = %v, want %v", got, want)
	}
	if got, _ := db.RecentTools(ctx, "c", 100); len(got) != 3 || got[2].Tool != "old" {
		t.Errorf("RecentTools(100 rows) = %v, want a, b, old", got)
	}
	if got, err := db.RecentTools(ctx, "nobody", 10); err != nil || len(got) != 0 {
		t.Errorf("a chat without calls: %v, %v", got, err)
	}
}

// testStatsSearches: the searches turns record sum over the window, and
// the tools found are counted with how often they were then called.
func testStatsSearches(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	to := time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	from, in := to.Add(-time.Hour), to.Add(-time.Minute)
	issue, pr, odd := store.ToolRef{Server: "github", Tool: "create_issue"}, store.ToolRef{Server: "github", Tool: "list_pull_requests"}, store.ToolRef{Server: "a \"b\"\x00", Tool: "ü"}
	for _, r := range []store.TurnRecord{
		{Outcome: "answer", At: in, Searches: []store.Search{{Found: []store.ToolRef{issue, pr}, Called: []store.ToolRef{issue}}, {}}},
		{Outcome: "answer", At: in, Searches: []store.Search{{Found: []store.ToolRef{pr, odd}}}},
		{Outcome: "answer", At: in},
		{Outcome: "answer", At: from.Add(-time.Second), Searches: []store.Search{{Found: []store.ToolRef{issue}, Called: []store.ToolRef{issue}}}},
	} {
		r.TurnID, r.UserID, r.ChatID, r.Model = "t", "u", "c", "m"
		if err := db.RecordTurn(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// The turn's last write may carry its record, searches and all.
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "hi"}},
		Turn: &store.TurnRecord{TurnID: "t2", UserID: "u", ChatID: "c", Outcome: "answer", At: in,
			Searches: []store.Search{{Found: []store.ToolRef{issue}, Called: []store.ToolRef{issue}}}}}); err != nil {
		t.Fatal(err)
	}
	s, err := db.Stats(ctx, from, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	odd.Server = strings.ToValidUTF8(odd.Server, "")
	want := store.SearchStats{Searches: 4, Empty: 1, Followed: 2, Tools: []store.FoundTool{
		{Server: "github", Tool: "create_issue", Found: 2, Called: 2},
		{Server: "github", Tool: "list_pull_requests", Found: 2},
	}}
	got := s.Search
	if len(got.Tools) == 3 {
		got.Tools = got.Tools[:2] // the odd names: checked below
	}
	if got.Searches != want.Searches || got.Empty != want.Empty || got.Followed != want.Followed || !slices.Equal(got.Tools, want.Tools) {
		t.Errorf("Search = %+v, want %+v", s.Search, want)
	}
	if len(s.Search.Tools) != 3 || !strings.HasPrefix(s.Search.Tools[2].Server, "a \"b\"") || s.Search.Tools[2].Tool != "ü" {
		t.Errorf("a server with quotes, a NUL and a tool not in ASCII: %+v", s.Search.Tools)
	}
}
