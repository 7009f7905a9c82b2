package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// A write queued behind a busy writer gives up when its context ends.
func TestQueuedWriteHonoursDeadline(t *testing.T) {
	db, _ := open(t)
	ctx := t.Context()
	conv := storetest.Active(t, db, "c")
	release, err := sqlite.HoldWriter(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = storetest.AppendMessages(short, db, conv, store.Message{Role: "user", Content: "queued"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued AppendTurn = %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("queued AppendTurn returned after %v, want about 50ms", waited)
	}
	err = db.InboxPut(short, storetest.Item(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued InboxPut = %v, want context.DeadlineExceeded", err)
	}
	// Reads do not wait for the writer.
	if _, err := db.Messages(ctx, conv); err != nil {
		t.Errorf("Messages while the writer is busy: %v", err)
	}
	release()
	if err := storetest.AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "later"}); err != nil {
		t.Errorf("AppendTurn after release: %v", err)
	}
}
