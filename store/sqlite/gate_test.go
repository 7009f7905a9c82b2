package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// waitFor polls cond for up to five seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, what, cond)
}

// Writes pass one at a time, in order of arrival, urgent ones first.
func TestGateOrder(t *testing.T) {
	ctx := t.Context()
	var g sqlite.Gate
	if err := g.Enter(ctx, false); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	enter := func(name string, urgent bool) {
		n := g.Waiting()
		wg.Go(func() {
			if err := g.Enter(ctx, urgent); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			g.Leave()
		})
		waitFor(t, name+" queued", func() bool { return g.Waiting() == n+1 })
	}
	enter("a", false)
	enter("b", false)
	enter("inbox1", true)
	enter("c", false)
	enter("inbox2", true)
	g.Leave()
	wg.Wait()
	if want := []string{"inbox1", "inbox2", "a", "b", "c"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	// Free again: entering does not wait.
	if err := g.Enter(ctx, false); err != nil {
		t.Fatal(err)
	}
	g.Leave()
}

// A caller whose context ends while it waits leaves the queue; the gate
// keeps working for the others.
func TestGateCancel(t *testing.T) {
	var g sqlite.Gate
	if err := g.Enter(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	for _, urgent := range []bool{false, true} {
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- g.Enter(ctx, urgent) }()
		waitFor(t, "a waiter", func() bool { return g.Waiting() == 1 })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Enter (urgent %v) with its context cancelled = %v, want context.Canceled", urgent, err)
		}
		if n := g.Waiting(); n != 0 {
			t.Errorf("%d still waiting after the cancel", n)
		}
	}
	done := make(chan struct{})
	go func() {
		if err := g.Enter(t.Context(), false); err != nil {
			t.Error(err)
		}
		g.Leave()
		close(done)
	}()
	waitFor(t, "a waiter", func() bool { return g.Waiting() == 1 })
	g.Leave()
	<-done
}

// InboxPut goes ahead of the writes queued before it; done marks do not.
func TestInboxPutGoesFirst(t *testing.T) {
	ctx := t.Context()
	db, _ := open(t)
	// Triggers log the order in which rows are committed.
	err := sqlite.WriteFull(ctx, db, func(tx *sql.Tx) error {
		for _, q := range []string{
			`CREATE TABLE seq (id INTEGER PRIMARY KEY, what TEXT)`,
			`CREATE TRIGGER seq_call AFTER INSERT ON tool_calls BEGIN INSERT INTO seq (what) VALUES ('call'); END`,
			`CREATE TRIGGER seq_put AFTER INSERT ON inbox BEGIN INSERT INTO seq (what) VALUES ('put'); END`,
			`CREATE TRIGGER seq_done AFTER UPDATE OF processed_at ON inbox BEGIN INSERT INTO seq (what) VALUES ('done'); END`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO inbox (update_id, chat_id, payload, received_at) VALUES (1, 'c', x'', 0)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	release, err := sqlite.HoldGate(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	queue := func(write func() error) {
		n := sqlite.GateWaiting(db)
		wg.Go(func() {
			if err := write(); err != nil {
				t.Error(err)
			}
		})
		waitFor(t, "a queued write", func() bool { return sqlite.GateWaiting(db) == n+1 })
	}
	call := func() error {
		return db.RecordToolCall(ctx, store.ToolCall{ChatID: "c", Server: "s", Tool: "t", Status: "ok"})
	}
	queue(call)
	queue(func() error { return db.InboxDone(ctx, 1) })
	queue(call)
	queue(func() error { return db.InboxPut(ctx, store.InboxItem{UpdateID: 2, ChatID: "c"}) })
	release()
	wg.Wait()
	rows, err := db.ToolCalls(ctx, 0)
	if err != nil || len(rows) != 2 {
		t.Fatalf("ToolCalls = %d, %v; want 2", len(rows), err)
	}
	var order []string
	for id := int64(1); ; id++ {
		var what string
		err := sqlite.WriteFull(ctx, db, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, `SELECT what FROM seq WHERE id = ?`, id).Scan(&what)
		})
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, what)
	}
	// The first "put" is the setup's row.
	if want := []string{"put", "put", "call", "done", "call"}; !slices.Equal(order, want) {
		t.Errorf("commit order %v, want %v", order, want)
	}
}

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
