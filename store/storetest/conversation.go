package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

func testConversationsAndReset(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)

	first := Active(t, db, "c1")
	again := Active(t, db, "c1")
	if again != first {
		t.Errorf("active conversation twice: got %d then %d, want the same", first, again)
	}
	other := Active(t, db, "c2")
	if other == first {
		t.Errorf("two chats share conversation %d", first)
	}
	if err := AppendMessages(ctx, db, first, store.Message{Role: "user", Content: "before reset"}); err != nil {
		t.Fatal(err)
	}

	second, err := db.ResetConversation(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("ResetConversation returned the old conversation %d", first)
	}
	if got, err := active(ctx, db, "c1"); err != nil || got != second {
		t.Errorf("active conversation after reset = %d, %v; want %d", got, err, second)
	}
	if got, err := active(ctx, db, "c2"); err != nil || got != other {
		t.Errorf("reset of c1 changed c2: got %d, %v; want %d", got, err, other)
	}
	msgs, err := db.Messages(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 0 {
		t.Errorf("new conversation has %d messages, want 0", len(msgs))
	}

	// The old conversation stays, across a reopen too.
	db = reopen(t, db, open)
	msgs, err = db.Messages(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "before reset" {
		t.Errorf("old conversation after reset and reopen: %+v", msgs)
	}
	if got, err := active(ctx, db, "c1"); err != nil || got != second {
		t.Errorf("active conversation after reopen = %d, %v; want %d", got, err, second)
	}

	// Reset of a chat never seen starts its first conversation.
	if _, err := db.ResetConversation(ctx, "new"); err != nil {
		t.Errorf("ResetConversation of a new chat: %v", err)
	}
}

func testConversationEmptyChatID(t *testing.T, open Open) {
	db := open(t)
	if _, err := active(t.Context(), db, ""); err == nil {
		t.Error("AppendTurn to chat \"\": got nil error, want one")
	}
	if _, err := db.ResetConversation(t.Context(), ""); err == nil {
		t.Error("ResetConversation(\"\"): got nil error, want one")
	}
}

func testMessagesOrderAndTokens(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	conv := Active(t, db, "c")
	// A time in another zone, with sub-millisecond digits, comes back as
	// the same instant in UTC, truncated to the millisecond.
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("X", 3*3600))
	want := []store.Message{
		{Role: "system", Content: "sys", CreatedAt: at},
		{Role: "user", Content: "hi", CreatedAt: at},
		{Role: "assistant", Content: "hello", PromptTokens: 120, CompletionTokens: 7, CreatedAt: at},
	}
	if err := AppendMessages(ctx, db, conv, want[:2]...); err != nil {
		t.Fatal(err)
	}
	if err := AppendMessages(ctx, db, conv, want[2]); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "now"}); err != nil {
		t.Fatal(err)
	}
	if err := AppendMessages(ctx, db, conv); err != nil {
		t.Errorf("AppendTurn with no messages: %v", err)
	}

	got, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d messages, want 4", len(got))
	}
	wantAt := at.Truncate(time.Millisecond).UTC()
	for i, w := range want {
		g := got[i]
		if g.Role != w.Role || g.Content != w.Content || g.PromptTokens != w.PromptTokens ||
			g.CompletionTokens != w.CompletionTokens || g.ConversationID != conv {
			t.Errorf("message %d = %+v, want %+v", i, g, w)
		}
		if !g.CreatedAt.Equal(wantAt) || g.CreatedAt.Location() != time.UTC {
			t.Errorf("message %d CreatedAt = %v, want %v in UTC", i, g.CreatedAt, wantAt)
		}
		if i > 0 && g.ID <= got[i-1].ID {
			t.Errorf("message ids not increasing: %d after %d", g.ID, got[i-1].ID)
		}
	}
	if last := got[3].CreatedAt; last.Before(before.Truncate(time.Millisecond)) || last.After(time.Now()) {
		t.Errorf("defaulted CreatedAt = %v, want about now", last)
	}
}

// Any text a model or a tool produces is stored: valid UTF-8, however
// unusual, comes back byte for byte; a NUL byte or invalid UTF-8 does not
// fail the write (PostgreSQL stores them as U+FFFD, SQLite as given).
func testMessagesText(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	exact := []string{"", "'; DROP TABLE messages; --", "emoji 🦫 and RTL עברית", "\\x00 $1 %s ? :name", "line\r\nbreak\ttab"}
	lossy := []string{"nul \x00 byte", "bad \xff\xfe utf-8"}
	var msgs []store.Message
	for _, s := range append(slices.Clone(exact), lossy...) {
		msgs = append(msgs, store.Message{Role: "tool", Content: s})
	}
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: msgs,
		ToolCalls: []store.ToolCall{{ChatID: "c", Server: "s", Tool: "t", Arguments: "{\"a\":\"\x00\"}", Status: "ok"}}})
	if err != nil {
		t.Fatalf("AppendTurn with unusual text: %v", err)
	}
	got, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(msgs) {
		t.Fatalf("got %d messages, want %d", len(got), len(msgs))
	}
	for i, s := range exact {
		if got[i].Content != s {
			t.Errorf("message %d = %q, want %q", i, got[i].Content, s)
		}
	}
	for i, s := range lossy {
		g := got[len(exact)+i].Content
		if g != s && g != replaceBad(s) {
			t.Errorf("message %q came back as %q, want it as given or with U+FFFD", s, g)
		}
	}
}

// replaceBad is what PostgreSQL's store makes of s.
func replaceBad(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func testAppendTurn(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if _, err := db.CurrentConversation(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("CurrentConversation of a new chat = %v, want ErrNotFound", err)
	}
	call := store.ToolCall{UserID: "u", ChatID: "c", Server: "everything", Tool: "echo", Arguments: `{"message":"hi"}`, Status: "ok", Duration: 12 * time.Millisecond, ResultBytes: 8}
	// A new chat: the conversation starts with the first write.
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c",
		Messages:  []store.Message{{Role: "user", Content: "echo hi"}, {Role: "assistant", Content: "calling", PromptTokens: 9, CompletionTokens: 3}},
		ToolCalls: []store.ToolCall{call},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := db.CurrentConversation(ctx, "c"); err != nil || got != conv {
		t.Errorf("CurrentConversation = %d, %v; want %d", got, err, conv)
	}
	if got, err := active(ctx, db, "c"); err != nil || got != conv {
		t.Errorf("active conversation = %d, %v; want %d", got, err, conv)
	}
	// The active conversation again, then an explicit one.
	if again, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "tool", Content: "result"}}}); err != nil || again != conv {
		t.Errorf("AppendTurn to the active conversation = %d, %v; want %d", again, err, conv)
	}
	if again, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", ConversationID: conv, Messages: []store.Message{{Role: "assistant", Content: "done"}}}); err != nil || again != conv {
		t.Errorf("AppendTurn to conversation %d = %d, %v", conv, again, err)
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Content)
	}
	if want := []string{"user:echo hi", "assistant:calling", "tool:result", "assistant:done"}; !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q", got, want)
	}
	if msgs[1].PromptTokens != 9 || msgs[1].CompletionTokens != 3 {
		t.Errorf("tokens %d/%d, want 9/3", msgs[1].PromptTokens, msgs[1].CompletionTokens)
	}
	calls, err := db.ToolCalls(ctx, 0)
	if err != nil || len(calls) != 1 {
		t.Fatalf("ToolCalls = %d, %v; want 1", len(calls), err)
	}
	c := calls[0]
	c.ID, c.CreatedAt = 0, time.Time{}
	if c != call {
		t.Errorf("audit row %+v, want %+v", c, call)
	}

	// All or nothing: a failing part leaves no trace, not even a new
	// conversation.
	_, err = db.AppendTurn(ctx, store.TurnWrite{ChatID: "d",
		Messages: []store.Message{{Role: "user", Content: "lost"}}, ToolCalls: []store.ToolCall{call}, ConversationID: 999999})
	if err == nil {
		t.Fatal("AppendTurn to an unknown conversation: got nil, want an error")
	}
	if calls, _ := db.ToolCalls(ctx, 0); len(calls) != 1 {
		t.Errorf("a failed AppendTurn left %d audit rows, want 1", len(calls))
	}
	if msgs, err := db.Messages(ctx, 999999); err != nil || len(msgs) != 0 {
		t.Errorf("a failed AppendTurn left messages %+v, %v; want none", msgs, err)
	}
	if _, err := db.CurrentConversation(ctx, "d"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed AppendTurn left chat d a conversation: %v", err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{Messages: []store.Message{{Role: "user", Content: "x"}}}); err == nil {
		t.Error("AppendTurn without a chat: got nil, want an error")
	}
	if _, err := db.CurrentConversation(ctx, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CurrentConversation of no chat = %v, want ErrNotFound", err)
	}
	// A turn with nothing to store still names its conversation.
	if empty, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "e"}); err != nil || empty == 0 {
		t.Errorf("AppendTurn with nothing = %d, %v; want a new conversation", empty, err)
	}
}

// A turn written with ReplaceFrom hides the messages from that id on, in
// the same transaction as its own, and they stay hidden after a reopen.
func testReplaceMessages(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "q1"}, {Role: "assistant", Content: "a1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, Messages: []store.Message{{Role: "user", Content: "q2"}, {Role: "assistant", Content: "a2"}}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("Messages = %v, %v", msgs, err)
	}
	replacedQ2 := msgs[2].ID
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, ReplaceFrom: replacedQ2,
		Messages: []store.Message{{Role: "user", Content: "q2"}, {Role: "assistant", Content: "a2 again"}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t)
	if got, want := contents(t, db, conv), []string{"q1", "a1", "q2", "a2 again"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Messages after a replace = %q, want %q", got, want)
	}

	// From an id that is no longer a message of the conversation's (the
	// q2 replaced above), the messages from that id on are replaced all
	// the same; from past the last one, none is.
	for _, step := range []struct {
		from int64
		want []string
	}{
		{1 << 40, []string{"q1", "a1", "q2", "a2 again", "q3"}},
		{replacedQ2, []string{"q1", "a1", "q3"}},
	} {
		if _, err := db.AppendTurn(ctx, store.TurnWrite{ConversationID: conv, ReplaceFrom: step.from,
			Messages: []store.Message{{Role: "user", Content: "q3"}}}); err != nil {
			t.Fatal(err)
		}
		if got := contents(t, db, conv); strings.Join(got, "|") != strings.Join(step.want, "|") {
			t.Errorf("Messages after a replace from %d = %q, want %q", step.from, got, step.want)
		}
	}
}

// contents are the contents of conversation conv's messages, in order.
func contents(t *testing.T, db Store, conv int64) []string {
	t.Helper()
	msgs, err := db.Messages(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	return got
}

// A message kept for one member of a group carries who it is for and
// what the others read in its place, and a turn's request the turn's
// id: all come back as written, by each way of reading messages, after
// a reopen too.
func testMessagesOnlyFor(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "-42", Messages: []store.Message{
		{Role: "user", Content: "search my memories", TurnID: "00000000000004d2"},
		{Role: "assistant", Content: "<use_mcp_tool>…</use_mcp_tool>", OnlyFor: "2"},
		{Role: "tool", Content: "Alice's PIN is 4711", OnlyFor: "2"},
		{Role: "assistant", Content: "<thinking>4711</thinking>Found it.", OnlyFor: "2", Shared: "Found it."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, open)
	all, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	recent, err := db.RecentMessages(ctx, conv, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	since, err := db.MessagesSince(ctx, conv, all[0].ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"00000000000004d2||", "|2|", "|2|", "|2|Found it."}
	for name, msgs := range map[string][]store.Message{"Messages": all, "RecentMessages": recent, "MessagesSince": since} {
		var got []string
		for _, m := range msgs {
			got = append(got, m.TurnID+"|"+m.OnlyFor+"|"+m.Shared)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: TurnID|OnlyFor|Shared = %q, want %q", name, got, want)
		}
	}
}
