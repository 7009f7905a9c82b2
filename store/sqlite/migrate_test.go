package sqlite_test

import (
	"context"
	"database/sql"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

func TestMigrationsNewFileHasAllTables(t *testing.T) {
	db, _ := open(t)
	for _, table := range []string{"chats", "conversations", "messages", "tool_calls", "pending", "inbox", "token_usage", "schema_migrations"} {
		n, err := sqlite.QueryInt(t.Context(), db, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: got %d, want 1", table, n)
		}
	}
}

func TestMigrations(t *testing.T) {
	storetest.RunMigrations(t, func(t *testing.T) storetest.Migrator {
		path := filepath.Join(t.TempDir(), "m.db")
		return storetest.Migrator{
			Open: func(ctx context.Context, fsys fs.FS) (io.Closer, error) {
				return sqlite.OpenWithMigrations(ctx, path, fsys)
			},
			Int: func(ctx context.Context, db io.Closer, query string) (int64, error) {
				return sqlite.QueryInt(ctx, db.(*sqlite.DB), query)
			},
			Tables: `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'c'`,
		}
	})
}

// TestMigrationCountsHistoryBytes upgrades a database written before
// migration 0013 and reads its history by bytes.
func TestMigrationCountsHistoryBytes(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sqlite.OpenWithMigrations(ctx, path, storetest.Before(t, os.DirFS("migrations"), "0013"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.WriteFull(ctx, old, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, storetest.OldMessages)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	storetest.CheckUpgradedHistory(ctx, t, db)
}
