package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Many goroutines writing and reading at once, through one DB and through a
// second DB on the same file (as a second process would), never see
// SQLITE_BUSY or lose a write.
func TestConcurrentWriters(t *testing.T) {
	ctx := t.Context()
	db, path := open(t)
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })

	const (
		workers = 32
		rounds  = 6
		chats   = 8
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*8)
	for w := range workers {
		h := db
		if w%4 == 0 {
			h = other
		}
		wg.Go(func() {
			chat := fmt.Sprint("chat", w%chats)
			for r := range rounds {
				conv, err := h.ActiveConversation(ctx, chat)
				if err != nil {
					errs <- err
					return
				}
				errs <- h.AppendMessages(ctx, conv,
					store.Message{Role: "user", Content: fmt.Sprint(w, r)},
					store.Message{Role: "assistant", Content: "ok", CompletionTokens: 1})
				errs <- h.RecordToolCall(ctx, store.ToolCall{UserID: "u", ChatID: chat, Server: "s", Tool: "t", Arguments: "{}", Status: "ok"})
				id, err := h.CreatePending(ctx, store.Pending{ChatID: chat, UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
				errs <- err
				if err == nil {
					// Another worker of the same chat may have superseded it.
					if err := h.ResolvePending(ctx, id, "answered"); err != nil && !errors.Is(err, store.ErrResolved) {
						errs <- err
					}
				}
				errs <- h.InboxPut(ctx, store.InboxItem{UpdateID: int64(w*rounds + r + 1), ChatID: chat})
				_, err = h.Messages(ctx, conv)
				errs <- err
				_, err = h.InboxPending(ctx, 10)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent call: %v", err)
		}
	}

	var messages int
	for c := range chats {
		conv, err := db.ActiveConversation(ctx, fmt.Sprint("chat", c))
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := db.Messages(ctx, conv)
		if err != nil {
			t.Fatal(err)
		}
		messages += len(msgs)
	}
	if want := workers * rounds * 2; messages != want {
		t.Errorf("stored %d messages, want %d", messages, want)
	}
	if calls, err := db.ToolCalls(ctx, 0); err != nil || len(calls) != workers*rounds {
		t.Errorf("stored %d tool calls (%v), want %d", len(calls), err, workers*rounds)
	}
	if items, err := db.InboxPending(ctx, 0); err != nil || len(items) != workers*rounds {
		t.Errorf("inbox holds %d items (%v), want %d", len(items), err, workers*rounds)
	}
	for c := range chats {
		// Every worker resolved or superseded its own question.
		if p, err := db.OpenPending(ctx, fmt.Sprint("chat", c)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("chat%d still has open %+v (%v)", c, p, err)
		}
	}
}

// Every call honours its context: a cancelled one fails with
// context.Canceled and leaves the DB usable.
func TestContextCancelled(t *testing.T) {
	db, _ := open(t)
	ctx := t.Context()
	conv, err := db.ActiveConversation(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := db.CreatePending(ctx, store.Pending{ChatID: "c", UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InboxPut(ctx, item(1)); err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	calls := map[string]func(context.Context) error{
		"ActiveConversation": func(ctx context.Context) error { _, err := db.ActiveConversation(ctx, "new"); return err },
		"ResetConversation":  func(ctx context.Context) error { _, err := db.ResetConversation(ctx, "c"); return err },
		"AppendMessages": func(ctx context.Context) error {
			return db.AppendMessages(ctx, conv, store.Message{Role: "user", Content: "x"})
		},
		"Messages":       func(ctx context.Context) error { _, err := db.Messages(ctx, conv); return err },
		"RecordToolCall": func(ctx context.Context) error { return db.RecordToolCall(ctx, store.ToolCall{}) },
		"ToolCalls":      func(ctx context.Context) error { _, err := db.ToolCalls(ctx, 1); return err },
		"CreatePending": func(ctx context.Context) error {
			_, err := db.CreatePending(ctx, store.Pending{ChatID: "c", Kind: store.KindQuestion})
			return err
		},
		"OpenPending":      func(ctx context.Context) error { _, err := db.OpenPending(ctx, "c"); return err },
		"GetPending":       func(ctx context.Context) error { _, err := db.GetPending(ctx, pid); return err },
		"ResolvePending":   func(ctx context.Context) error { return db.ResolvePending(ctx, pid, "x") },
		"ExpiredPending":   func(ctx context.Context) error { _, err := db.ExpiredPending(ctx, time.Now()); return err },
		"InboxPut":         func(ctx context.Context) error { return db.InboxPut(ctx, item(2)) },
		"InboxPending":     func(ctx context.Context) error { _, err := db.InboxPending(ctx, 0); return err },
		"InboxDone":        func(ctx context.Context) error { return db.InboxDone(ctx, 1) },
		"InboxMaxUpdateID": func(ctx context.Context) error { _, err := db.InboxMaxUpdateID(ctx); return err },
		"InboxPrune":       func(ctx context.Context) error { _, err := db.InboxPrune(ctx, time.Now()); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(cancelled); !errors.Is(err, context.Canceled) {
				t.Errorf("with a cancelled context: %v, want context.Canceled", err)
			}
		})
	}

	// Nothing changed, and the DB still works.
	if p, err := db.OpenPending(ctx, "c"); err != nil || p.ID != pid {
		t.Errorf("OpenPending = %+v, %v; want %d still open", p, err, pid)
	}
	if got, err := db.ActiveConversation(ctx, "c"); err != nil || got != conv {
		t.Errorf("ActiveConversation = %d, %v; want %d", got, err, conv)
	}
	if items, err := db.InboxPending(ctx, 0); err != nil || len(items) != 1 {
		t.Errorf("InboxPending = %d items, %v; want 1", len(items), err)
	}
	if err := db.AppendMessages(ctx, conv, store.Message{Role: "user", Content: "after"}); err != nil {
		t.Errorf("AppendMessages after the cancellations: %v", err)
	}
}

// A write queued behind a busy writer gives up when its context ends.
func TestQueuedWriteHonoursDeadline(t *testing.T) {
	db, _ := open(t)
	ctx := t.Context()
	conv, err := db.ActiveConversation(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	release, err := store.HoldWriter(ctx, db)
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
