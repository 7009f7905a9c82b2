package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// A write queued behind a busy writer gives up when its context ends.
func TestQueuedWriteHonoursDeadline(t *testing.T) {
	db, _ := open(t)
	ctx := t.Context()
	conv, err := db.ActiveConversation(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	release, err := sqlite.HoldWriter(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = db.AppendMessages(short, conv, store.Message{Role: "user", Content: "queued"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued AppendMessages = %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("queued AppendMessages returned after %v, want about 50ms", waited)
	}
	err = db.InboxPut(short, item(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued InboxPut = %v, want context.DeadlineExceeded", err)
	}
	// Reads do not wait for the writer.
	if _, err := db.Messages(ctx, conv); err != nil {
		t.Errorf("Messages while the writer is busy: %v", err)
	}
	release()
	if err := db.AppendMessages(ctx, conv, store.Message{Role: "user", Content: "later"}); err != nil {
		t.Errorf("AppendMessages after release: %v", err)
	}
}
