package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// What a turn and an update do runs on statements prepared at Open, and
// they survive a reopen and a transaction that failed.
func TestHotStatementsArePrepared(t *testing.T) {
	ctx := t.Context()
	db, path := open(t)
	run := func(db *sqlite.DB) {
		t.Helper()
		if err := db.InboxPut(ctx, store.InboxItem{UpdateID: 1, ChatID: "c", Payload: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.InboxQueued(ctx, 0, 10); err != nil {
			t.Fatal(err)
		}
		if err := db.InboxDone(ctx, 1, 2); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("InboxDone(1, 2) = %v, want ErrNotFound for 2", err)
		}
		conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c"}) // new, then existing
		if err != nil {
			t.Fatal(err)
		}
		if again, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c"}); err != nil || again != conv {
			t.Fatalf("AppendTurn to the active conversation = %d, %v; want %d", again, err, conv)
		}
		if err := storetest.AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "hi"}, store.Message{Role: "assistant", Content: "yo"}); err != nil {
			t.Fatal(err)
		}
		if cur, err := db.CurrentConversation(ctx, "c"); err != nil || cur != conv {
			t.Fatalf("CurrentConversation = %d, %v; want %d", cur, err, conv)
		}
		if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "new", Messages: []store.Message{{Role: "user", Content: "hi"}},
			ToolCalls: []store.ToolCall{{UserID: "u", ChatID: "new", Server: "s", Tool: "t", Status: "ok"}},
			Turn:      &store.TurnRecord{TurnID: "t1", UserID: "u", ChatID: "new", Outcome: "answer", Model: "m", Calls: []store.ModelCall{{Outcome: "ok"}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", ConversationID: conv, Messages: []store.Message{{Role: "tool", Content: "r"}}}); err != nil {
			t.Fatal(err)
		}
		msgs, err := db.Messages(ctx, conv)
		if err != nil || len(msgs) < 2 {
			t.Fatalf("Messages = %d, %v", len(msgs), err)
		}
		// What a turn reads of its history and its chat's settings.
		if _, err := db.RecentMessages(ctx, conv, 100); err != nil {
			t.Fatal(err)
		}
		if since, err := db.MessagesSince(ctx, conv, msgs[0].ID, 10); err != nil || len(since) != len(msgs) {
			t.Fatalf("MessagesSince = %d, %v; want %d", len(since), err, len(msgs))
		}
		if st, err := db.ChatState(ctx, "c", "c"); err != nil || st.Conversation != conv {
			t.Fatalf("ChatState = %+v, %v; want conversation %d", st, err, conv)
		}
		if _, err := db.ChatInstructions(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ChatServersOff(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ChatProfile(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ChatTopicsShared(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordToolCall(ctx, store.ToolCall{UserID: "u", ChatID: "c", Server: "s", Tool: "t", Status: "ok"}); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordTurn(ctx, store.TurnRecord{TurnID: "t2", UserID: "u", ChatID: "c", Outcome: "budget"}); err != nil {
			t.Fatal(err)
		}
		id, err := db.CreatePending(ctx, store.Pending{ChatID: "c", UserID: "u", ConversationID: conv, Kind: store.KindApproval, Payload: "{}", ExpiresAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.OpenPending(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.GetPending(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := db.ResolvePending(ctx, id, "approved", ""); err != nil {
			t.Fatal(err)
		}
		if err := db.ResolvePending(ctx, id, "approved", ""); !errors.Is(err, store.ErrResolved) {
			t.Fatalf("second ResolvePending = %v, want ErrResolved", err)
		}
		if err := db.ResolvePending(ctx, id+100, "approved", ""); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ResolvePending(unknown) = %v, want ErrNotFound", err)
		}
		if n := sqlite.Unprepared(db); n != 0 {
			t.Errorf("%d statements ran unprepared", n)
		}
	}
	run(db)
	// A failed write rolls back; the statements stay usable.
	if err := storetest.AppendMessages(ctx, db, 999999, store.Message{Role: "user", Content: "x"}); err == nil {
		t.Error("AppendTurn to an unknown conversation: got nil, want a foreign key error")
	}
	run(db)
	run(reopen(t, db, path))
}

// A turn's first read goes to the writer's connection only when no write
// holds it: with a write under way it reads on a reader, at once, the
// same.
func TestChatStateNeverWaitsForTheWriter(t *testing.T) {
	ctx := t.Context()
	db, _ := open(t)
	if err := db.SetChatInstructions(ctx, "c", "Be brief."); err != nil {
		t.Fatal(err)
	}
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := store.ChatState{Instructions: "Be brief.", Conversation: conv}
	free, err := db.ChatState(ctx, "c", "c")
	if err != nil || free.Instructions != want.Instructions || free.Conversation != want.Conversation {
		t.Fatalf("ChatState with the writer free = %+v, %v; want %+v", free, err, want)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- sqlite.WriteFull(ctx, db, func(*sql.Tx) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	// Were it to wait for the writer, it would wait for release, which
	// comes after it: its deadline ends it with an error instead.
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	busy, err := db.ChatState(short, "c", "c")
	close(release)
	if err != nil || busy.Instructions != want.Instructions || busy.Conversation != want.Conversation {
		t.Errorf("ChatState while a write holds the writer = %+v, %v; want %+v", busy, err, want)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}
