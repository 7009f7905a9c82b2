package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// Many goroutines writing and reading at once, through one handle and
// through a second one on the same database (as a second process would),
// never fail or lose a write.
func testConcurrentWriters(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	other := open(t) // as a second process would

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
				conv, err := active(ctx, h, chat)
				if err != nil {
					errs <- err
					return
				}
				errs <- AppendMessages(ctx, h, conv,
					store.Message{Role: "user", Content: fmt.Sprint(w, r)},
					store.Message{Role: "assistant", Content: "ok", CompletionTokens: 1})
				errs <- h.RecordToolCall(ctx, store.ToolCall{UserID: "u", ChatID: chat, Server: "s", Tool: "t", Arguments: "{}", Status: "ok"})
				id, err := h.CreatePending(ctx, store.Pending{ChatID: chat, UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
				errs <- err
				if err == nil {
					// Another worker of the same chat may have superseded it.
					if err := h.ResolvePending(ctx, id, "answered", ""); err != nil && !errors.Is(err, store.ErrResolved) {
						errs <- err
					}
				}
				errs <- h.InboxPut(ctx, store.InboxItem{UpdateID: int64(w*rounds + r + 1), ChatID: chat})
				_, err = h.Messages(ctx, conv)
				errs <- err
				_, err = queued(ctx, h, 10)
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
		conv := Active(t, db, fmt.Sprint("chat", c))
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
	if items, err := queued(ctx, db, 0); err != nil || len(items) != workers*rounds {
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
func testContextCancelled(t *testing.T, open Open) {
	db := open(t)
	ctx := t.Context()
	conv := Active(t, db, "c")
	pid, err := db.CreatePending(ctx, store.Pending{ChatID: "c", UserID: "u", Kind: store.KindQuestion, Payload: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InboxPut(ctx, Item(1)); err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	calls := map[string]func(context.Context) error{
		"CurrentConversation": func(ctx context.Context) error { _, err := db.CurrentConversation(ctx, "c"); return err },
		"ResetConversation":   func(ctx context.Context) error { _, err := db.ResetConversation(ctx, "c"); return err },
		"AppendTurn new chat": func(ctx context.Context) error { _, err := active(ctx, db, "new"); return err },
		"AppendTurn": func(ctx context.Context) error {
			return AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "x"})
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
		"ResolvePending":   func(ctx context.Context) error { return db.ResolvePending(ctx, pid, "x", "") },
		"ExpiredPending":   func(ctx context.Context) error { _, err := db.ExpiredPending(ctx, time.Now()); return err },
		"InboxPut":         func(ctx context.Context) error { return db.InboxPut(ctx, Item(2)) },
		"InboxQueued":      func(ctx context.Context) error { _, err := queued(ctx, db, 0); return err },
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
	if got, err := active(ctx, db, "c"); err != nil || got != conv {
		t.Errorf("active conversation = %d, %v; want %d", got, err, conv)
	}
	if items, err := queued(ctx, db, 0); err != nil || len(items) != 1 {
		t.Errorf("inbox = %d items, %v; want 1", len(items), err)
	}
	if err := AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: "after"}); err != nil {
		t.Errorf("AppendTurn after the cancellations: %v", err)
	}
}

// handles opens n handles on the test's database, as n processes would.
func handles(t *testing.T, open Open, n int) []Store {
	hs := make([]Store, n)
	for i := range hs {
		hs[i] = open(t)
	}
	return hs
}

// Instances asking at once for a new chat's conversation all get the same
// one.
func testConcurrentActiveConversation(t *testing.T, open Open) {
	ctx := t.Context()
	hs := handles(t, open, 2)
	const callers = 16
	ids := make([]int64, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { ids[i], errs[i] = active(ctx, hs[i%2], "new") })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Errorf("caller %d: conversation %d, %v; want %d like caller 0", i, ids[i], errs[i], ids[0])
		}
	}
}

// Resets of one chat from several instances at once all succeed, each
// ending the conversation the one before it started: one stays active.
func testConcurrentResets(t *testing.T, open Open) {
	ctx := t.Context()
	hs := handles(t, open, 2)
	const callers, rounds = 8, 4
	ids := make(chan int64, callers*rounds)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for range rounds {
				id, err := hs[i%2].ResetConversation(ctx, "c")
				if err != nil {
					t.Errorf("ResetConversation: %v", err)
					return
				}
				ids <- id
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("two resets returned conversation %d", id)
		}
		seen[id] = true
	}
	cur, err := hs[0].CurrentConversation(ctx, "c")
	if err != nil || !seen[cur] {
		t.Errorf("CurrentConversation = %d, %v; want one of the resets' conversations", cur, err)
	}
	if got, err := active(ctx, hs[1], "c"); err != nil || got != cur {
		t.Errorf("active conversation through the other handle = %d, %v; want %d", got, err, cur)
	}
}

// Interactions created for one chat from several instances at once all
// succeed; exactly one stays open, the others superseded.
func testConcurrentCreatePending(t *testing.T, open Open) {
	ctx := t.Context()
	hs := handles(t, open, 2)
	const callers = 16
	ids := make([]int64, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			ids[i], errs[i] = hs[i%2].CreatePending(ctx, store.Pending{ChatID: "c", UserID: "u", Kind: store.KindQuestion, Payload: fmt.Sprint(i)})
		})
	}
	wg.Wait()
	var open1 []int64
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("CreatePending %d: %v", i, errs[i])
		}
		p, err := hs[0].GetPending(ctx, ids[i])
		switch {
		case err != nil:
			t.Fatal(err)
		case p.IsOpen():
			open1 = append(open1, p.ID)
		case p.Resolution != store.ResolutionSuperseded:
			t.Errorf("pending %d resolved as %q, want superseded", p.ID, p.Resolution)
		}
	}
	if len(open1) != 1 {
		t.Fatalf("open interactions %v, want exactly one", open1)
	}
	if p, err := hs[1].OpenPending(ctx, "c"); err != nil || p.ID != open1[0] {
		t.Errorf("OpenPending = %d, %v; want %d", p.ID, err, open1[0])
	}
}
