package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgram/mcpgram/store"
)

// open opens a database file in a fresh temporary folder and closes it at
// the end of the test.
func open(t testing.TB) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "mcpgram.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db, path
}

// reopen closes db and opens path again.
func reopen(t *testing.T, db *store.DB, path string) *store.DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestOpenCreatesFolderAndFile(t *testing.T) {
	_, path := open(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file: %v", err)
	}
}

func TestOpenRejectsMemory(t *testing.T) {
	for _, path := range []string{"", ":memory:"} {
		if db, err := store.Open(context.Background(), path); err == nil {
			_ = db.Close()
			t.Errorf("Open(%q): got nil error, want one", path)
		}
	}
}

func TestMigrations(t *testing.T) {
	ctx := t.Context()
	db, path := open(t)
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("SchemaVersion on a new file = %d, want >= 1", v)
	}
	conv, err := db.ActiveConversation(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AppendMessages(ctx, conv, store.Message{Role: "user", Content: "hello"}); err != nil {
		t.Fatal(err)
	}

	db = reopen(t, db, path)
	v2, err := db.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v2 != v {
		t.Errorf("SchemaVersion after reopen = %d, want %d", v2, v)
	}
	got, err := db.ActiveConversation(ctx, "chat")
	if err != nil {
		t.Fatal(err)
	}
	if got != conv {
		t.Errorf("ActiveConversation after reopen = %d, want %d", got, conv)
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "hello" {
		t.Errorf("Messages after reopen = %+v, want one \"hello\"", msgs)
	}
}
