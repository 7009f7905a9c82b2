package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

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

func TestMigrationsReopenAppliesOnlyNew(t *testing.T) {
	ctx := t.Context()
	path := t.TempDir() + "/m.db"
	v1 := fstest.MapFS{
		"0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);`)},
	}
	v2 := fstest.MapFS{
		"0001_a.sql": v1["0001_a.sql"],
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);`)},
		"README.md":  {Data: []byte(`not a migration`)},
	}
	broken := fstest.MapFS{
		"0001_a.sql":   v1["0001_a.sql"],
		"0002_b.sql":   v2["0002_b.sql"],
		"0003_bad.sql": {Data: []byte(`INSERT INTO a VALUES (3); SELECT nope FROM nowhere;`)},
	}

	steps := []struct {
		name        string
		fsys        fstest.MapFS
		wantErr     string // empty: Open succeeds
		wantVersion int64
		wantRows    int64 // rows in table a
	}{
		{"new file", v1, "", 1, 1},
		{"same migrations again", v1, "", 1, 1},
		{"one new migration", v2, "", 2, 2},
		{"failing migration rolls back", broken, "0003_bad.sql", 2, 2},
		{"binary older than file", v1, "newer", 2, 2},
		{"reopen after all that", v2, "", 2, 2},
	}
	for _, s := range steps {
		db, err := sqlite.OpenWithMigrations(ctx, path, s.fsys)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("%s: Open error = %v, want one containing %q", s.name, err, s.wantErr)
			}
			// Look at what is on disk with the last good set.
			if db, err = sqlite.OpenWithMigrations(ctx, path, v2); err != nil {
				t.Fatalf("%s: reopen: %v", s.name, err)
			}
		} else if err != nil {
			t.Fatalf("%s: Open: %v", s.name, err)
		}
		version, err := sqlite.QueryInt(ctx, db, `SELECT max(version) FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := sqlite.QueryInt(ctx, db, `SELECT count(*) FROM a`)
		if err != nil {
			t.Fatal(err)
		}
		if version != s.wantVersion || rows != s.wantRows {
			t.Errorf("%s: version %d, rows in a %d; want %d, %d", s.name, version, rows, s.wantVersion, s.wantRows)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigrationsBadNames(t *testing.T) {
	tests := map[string]fstest.MapFS{
		"no number":      {"init.sql": {Data: []byte(`SELECT 1;`)}},
		"zero":           {"0000_init.sql": {Data: []byte(`SELECT 1;`)}},
		"shared version": {"0001_a.sql": {Data: []byte(`SELECT 1;`)}, "1_b.sql": {Data: []byte(`SELECT 1;`)}},
		"none":           {},
	}
	for name, fsys := range tests {
		t.Run(name, func(t *testing.T) {
			db, err := sqlite.OpenWithMigrations(t.Context(), t.TempDir()+"/m.db", fsys)
			if err == nil {
				_ = db.Close()
				t.Fatal("Open: got nil error, want one")
			}
		})
	}
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
