package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// open opens a database file in a fresh temporary folder and closes it at
// the end of the test.
func open(t testing.TB) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "mcpgram.db")
	db, err := sqlite.Open(t.Context(), path)
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
func reopen(t *testing.T, db *sqlite.DB, path string) *sqlite.DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db, err := sqlite.Open(t.Context(), path)
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
		if db, err := sqlite.Open(context.Background(), path); err == nil {
			_ = db.Close()
			t.Errorf("Open(%q): got nil error, want one", path)
		}
	}
}

// The DSN's pragmas reach every pooled connection, not just the first.
func TestPragmasOnEveryConnection(t *testing.T) {
	db, _ := open(t)
	want := map[string]string{"busy_timeout": "5000", "journal_mode": "wal", "synchronous": "1", "foreign_keys": "1"}
	check := func(name string, conns []map[string]string, queryOnly string) {
		t.Helper()
		for i, got := range conns {
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s connection %d: %s = %q, want %q", name, i, k, got[k], v)
				}
			}
			if got["query_only"] != queryOnly {
				t.Errorf("%s connection %d: query_only = %q, want %q", name, i, got["query_only"], queryOnly)
			}
		}
	}
	readers, err := sqlite.Pragmas(t.Context(), db, 4)
	if err != nil {
		t.Fatal(err)
	}
	check("reader", readers, "1")
	writer, err := sqlite.Pragmas(t.Context(), db, 0)
	if err != nil {
		t.Fatal(err)
	}
	check("writer", writer, "0")
}

// Characters that mean something in a URI are part of the file name.
func TestOpenOddPath(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag%20", "my db?.sqlite")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file not at the path given: %v", err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
}

func TestOpenRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	db, err := sqlite.Open(t.Context(), "data/rel.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if !filepath.IsAbs(db.Path()) {
		t.Errorf("Path() = %q, want an absolute path", db.Path())
	}
	if _, err := os.Stat("data/rel.db"); err != nil {
		t.Errorf("database file: %v", err)
	}
}

func TestOpenNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte("this is not a SQLite file, not even close; padding padding padding padding padding padding"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(t.Context(), path)
	if err == nil {
		_ = db.Close()
		t.Fatal("Open of a junk file: got nil error, want one")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
}
