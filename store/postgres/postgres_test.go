package postgres_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/mcpgram/mcpgram/internal/testenv"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := testenv.StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// open opens a fresh database and closes it at the end of the test.
func open(t *testing.T) (*postgres.DB, string) {
	t.Helper()
	dsn := testenv.Postgres(t)
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, dsn
}

func TestMigrationsNewDatabaseHasAllTables(t *testing.T) {
	t.Parallel()
	db, _ := open(t)
	for _, table := range []string{"chats", "conversations", "messages", "tool_calls", "pending", "inbox", "schema_migrations"} {
		n, err := postgres.QueryInt(t.Context(), db, `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_name = $1`, table)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("table %s: got %d, want 1", table, n)
		}
	}
}

func TestMigrationsReopenAppliesOnlyNew(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := testenv.Postgres(t)
	v1 := fstest.MapFS{
		"0001_a.sql": {Data: []byte(`CREATE TABLE a (x integer); INSERT INTO a VALUES (1);`)},
	}
	v2 := fstest.MapFS{
		"0001_a.sql": v1["0001_a.sql"],
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (y integer); INSERT INTO a VALUES (2);`)},
		"README.md":  {Data: []byte(`not a migration`)},
	}
	broken := fstest.MapFS{
		"0001_a.sql":   v1["0001_a.sql"],
		"0002_b.sql":   v2["0002_b.sql"],
		"0003_bad.sql": {Data: []byte(`CREATE TABLE c (z integer); INSERT INTO a VALUES (3); SELECT nope FROM nowhere;`)},
	}
	steps := []struct {
		name        string
		fsys        fstest.MapFS
		wantErr     string // empty: Open succeeds
		wantVersion int64
		wantRows    int64 // rows in table a
	}{
		{"new database", v1, "", 1, 1},
		{"same migrations again", v1, "", 1, 1},
		{"one new migration", v2, "", 2, 2},
		{"failing migration rolls back", broken, "0003_bad.sql", 2, 2},
		{"binary older than database", v1, "newer", 2, 2},
		{"reopen after all that", v2, "", 2, 2},
	}
	for _, s := range steps {
		db, err := postgres.OpenWithMigrations(ctx, dsn, s.fsys)
		if s.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), s.wantErr) {
				t.Fatalf("%s: Open error = %v, want one containing %q", s.name, err, s.wantErr)
			}
			if db, err = postgres.OpenWithMigrations(ctx, dsn, v2); err != nil {
				t.Fatalf("%s: reopen: %v", s.name, err)
			}
		} else if err != nil {
			t.Fatalf("%s: Open: %v", s.name, err)
		}
		version, err := postgres.QueryInt(ctx, db, `SELECT max(version) FROM schema_migrations`)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := postgres.QueryInt(ctx, db, `SELECT count(*) FROM a`)
		if err != nil {
			t.Fatal(err)
		}
		if version != s.wantVersion || rows != s.wantRows {
			t.Errorf("%s: version %d, rows in a %d; want %d, %d", s.name, version, rows, s.wantVersion, s.wantRows)
		}
		// The failed migration's table went with it: DDL is transactional.
		if c, err := postgres.QueryInt(ctx, db, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'c'`); err != nil || c != 0 {
			t.Errorf("%s: table c of the failed migration: %d, %v; want none", s.name, c, err)
		}
		_ = db.Close()
	}
}

func TestMigrationsBadNames(t *testing.T) {
	t.Parallel()
	dsn := testenv.Postgres(t)
	tests := map[string]fstest.MapFS{
		"no number":      {"init.sql": {Data: []byte(`SELECT 1;`)}},
		"zero":           {"0000_init.sql": {Data: []byte(`SELECT 1;`)}},
		"shared version": {"0001_a.sql": {Data: []byte(`SELECT 1;`)}, "1_b.sql": {Data: []byte(`SELECT 1;`)}},
		"none":           {},
	}
	for name, fsys := range tests {
		t.Run(name, func(t *testing.T) {
			db, err := postgres.OpenWithMigrations(t.Context(), dsn, fsys)
			if err == nil {
				_ = db.Close()
				t.Fatal("Open: got nil error, want one")
			}
		})
	}
}

// Instances starting together on a new database migrate it once, one
// after the other, and all open.
func TestMigrationsConcurrentOpen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := testenv.Postgres(t)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := postgres.Open(ctx, dsn)
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
		}
	}
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// Each migration was applied once: one row each, not one per Open.
	rows, err := postgres.QueryInt(ctx, db, `SELECT count(*) FROM schema_migrations`)
	if want := postgres.Migrations(t); err != nil || rows != want {
		t.Errorf("schema_migrations has %d rows, %v; want %d", rows, err, want)
	}
}

// An error opening a database never shows the DSN's password.
func TestOpenErrorHidesPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://mcpgram:s3cr3t-pw@127.0.0.1:1/mcpgram?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=mcpgram password=s3cr3t-pw dbname=mcpgram sslmode=disable",
		"postgres://mcpgram:s3cr3t-pw@127.0.0.1:1/mcpgram?sslmode=bogus",
	} {
		db, err := postgres.Open(t.Context(), dsn)
		if err == nil {
			_ = db.Close()
			t.Fatalf("Open(%q) with nothing listening: got nil error", dsn)
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open error shows the password: %v", err)
		}
	}
}

// TestMigrationCountsHistoryBytes upgrades a database written before
// migration 0014 and reads its history by bytes.
func TestMigrationCountsHistoryBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := upgrade(t, "0014", func(old *postgres.DB) error { return postgres.Exec(ctx, old, storetest.OldMessages) })
	storetest.CheckUpgradedHistory(ctx, t, db)
}

// upgrade makes a database of the migrations before version, has write
// write to it (as a version of that time did), and opens it as this
// version does, with every migration: the database as an upgrade leaves it.
func upgrade(t *testing.T, version string, write func(old *postgres.DB) error) *postgres.DB {
	t.Helper()
	ctx := t.Context()
	dsn := testenv.Postgres(t)
	old, err := postgres.OpenWithMigrations(ctx, dsn, storetest.Before(t, os.DirFS("migrations"), version))
	if err != nil {
		t.Fatal(err)
	}
	if err := write(old); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
