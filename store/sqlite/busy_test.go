package sqlite_test

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// lockFile takes the write lock of the database at path from another
// connection, as another process would, until release is called.
func lockFile(t *testing.T, path string) (release func()) {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			_, _ = conn.ExecContext(t.Context(), `ROLLBACK`)
			_ = conn.Close()
			_ = other.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// A write that finds the file locked by another process past busy_timeout
// is tried again, and succeeds once the lock is let go; locked for longer
// than the retries last, it fails with store.ErrUnavailable, and stores
// nothing.
func TestBusyIsRetried(t *testing.T) {
	defer sqlite.SetBusyTimeout(50 * time.Millisecond)()
	db, path := open(t)
	ctx := t.Context()
	write := func(text string) error {
		_, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: text}}})
		return err
	}
	if err := write("first"); err != nil {
		t.Fatal(err)
	}

	release := lockFile(t, path)
	done := make(chan error, 1)
	go func() { done <- write("waited") }()
	// The other process's hold the write rides out: not a wait for a signal.
	time.Sleep(300 * time.Millisecond)
	release()
	if err := <-done; err != nil {
		t.Errorf("a write while another process held the lock: %v", err)
	}

	sqlite.SetRetryFor(db, 200*time.Millisecond)
	release = lockFile(t, path)
	err := write("lost")
	release()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a write while the lock stayed taken: %v, want ErrUnavailable", err)
	}
	if err := db.InboxPut(ctx, store.InboxItem{UpdateID: 1, ChatID: "c"}); err != nil {
		t.Errorf("the next write: %v", err)
	}
	conv, _ := db.CurrentConversation(ctx, "c")
	msgs, err := db.Messages(ctx, conv)
	if err != nil || len(msgs) != 2 || msgs[1].Content != "waited" {
		t.Errorf("messages %+v, %v; want first and waited", msgs, err)
	}
}
